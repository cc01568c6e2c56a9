"""The server the Procfile ships, side by side: uvicorn and granian, the access log off and on.

    python bench/server_choice.py --pool snapshots --rounds 5 --seconds 4     # docs/benchmarks.md, "Servers"

Every service target is started as the Procfile starts it (``sudokupool serve``, its flags and logging),
with ``SUDOKUPOOL_SERVER`` and ``SUDOKUPOOL_ACCESS_LOG`` set per target; the baseline (1.0) is the bare
ASGI app (bench/bare_app.py) on uvicorn with a body of the service's median size, and the bare app on
granian shows that server's own limit. The limiter is on for ``/api/v2`` and counts every request (a key
with a limit of 10^9, and the anonymous limit raised alike), but never trips. wrk loads each target in
interleaved rounds; medians of req/s and p99. Also the resident memory of one and of two workers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, body_size, latest_export, machine, pool_dir, rounds, service  # noqa: E402
from load import Target, sample_ids, summarize  # noqa: E402
from servers import Server, proc_status, uvicorn  # noqa: E402

VARIANTS = {
    "uvicorn": {"SUDOKUPOOL_SERVER": "uvicorn"},
    "uvicorn, access log on": {"SUDOKUPOOL_SERVER": "uvicorn", "SUDOKUPOOL_ACCESS_LOG": "on"},
    "granian": {"SUDOKUPOOL_SERVER": "granian"},
    "granian, access log on": {"SUDOKUPOOL_SERVER": "granian", "SUDOKUPOOL_ACCESS_LOG": "on"},
}


def granian_bare(size: int, log: Path) -> Server:
    argv = ["granian", "--interface", "asgi", "--loop", "uvloop", "--http", "1", "--no-ws", "--host", "127.0.0.1",
            "--port", "{port}", "--working-dir", str(BENCH), "bare_app:app"]  # fmt: skip
    return Server("bare granian", argv, env={"BENCH_BODY_SIZE": str(size)}, probe="/", log=log)


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its children (a server's workers)."""
    total = proc_status(pid).get("VmRSS", 0)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
                if parent == pid:
                    total += tree_rss(int(entry.name))
            except (OSError, ValueError):
                continue
    return total


def workers_memory(directory: Path) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for name in ("uvicorn", "granian"):
        found[name] = {}
        for workers in (1, 2):
            env = {**VARIANTS[name], "WEB_CONCURRENCY": str(workers)}
            server = service(directory, OUT / f"workers-{name}-{workers}.log", env=env).start()
            try:
                time.sleep(1)
                found[name][str(workers)] = tree_rss(server.pid)
            finally:
                server.stop()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="snapshots", help="pool name under bench/pools or a directory")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    servers: list[Server] = []
    key = {"X-API-Key": KEY}
    found: list[Target] = []
    try:
        for name, env in VARIANTS.items():
            svc = service(directory, OUT / f"server-{name.replace(' ', '').replace(',', '-')}.log", env=env).start()
            servers.append(svc)
            found.append(Target(f"{name}: v2 random", svc.base, "/api/v2/puzzles/random", key))
            found.append(Target(f"{name}: v2 by id", svc.base, "/api/v2/puzzles/{id}", key, ids))
        size = body_size(servers[0])
        bare = uvicorn("bare", "bare_app:app", "--app-dir", str(BENCH), env={"BENCH_BODY_SIZE": str(size)},
                       probe="/", log=OUT / "bare.log").start()  # fmt: skip
        servers.append(bare)
        bare_g = granian_bare(size, OUT / "bare-granian.log").start()
        servers.append(bare_g)
        found[:0] = [Target("bare ASGI app on uvicorn", bare.base, "/"),
                     Target("bare ASGI app on granian", bare_g.base, "/")]  # fmt: skip
        runs = rounds(found, count=args.rounds, seconds=args.seconds, connections=args.connections)
    finally:
        for server in servers:
            server.stop()
    results = {name: summarize(r) for name, r in runs.items()}
    memory = workers_memory(directory)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = OUT / f"{stamp}-servers.json"
    path.write_text(json.dumps({"machine": machine(), "pool": str(directory), "body_size": size,
                                "throughput": results, "memory": memory}, indent=2))  # fmt: skip
    base = results["bare ASGI app on uvicorn"]["rps"]
    print("| target | req/s (median) | min-max | p99 ms | × bare ASGI on uvicorn |\n|---|---:|---:|---:|---:|")
    for name, s in results.items():
        errors = f" ({s['errors']} errors, {s['status_errors']} non-2xx)" if s["errors"] or s["status_errors"] else ""
        print(f"| {name}{errors} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p99_ms']} "
              f"| {s['rps'] / base:.2f} |")  # fmt: skip
    print("\nresident memory (all processes), bytes:", json.dumps(memory))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
