"""The server the Procfile ships, side by side: uvicorn and granian, the access log off and on.

    python bench/server_choice.py --pool snapshots --rounds 5 --seconds 4     # docs/benchmarks.md, "Servers"

Every service target is started as the Procfile starts it (``sudokupool serve``, its flags and logging),
with ``SUDOKUPOOL_SERVER`` and ``SUDOKUPOOL_ACCESS_LOG`` set per target; the baseline (1.0) is the bare
ASGI app (bench/bare_app.py) on uvicorn with a body of the service's median size, and the bare app on
granian shows that server's own limit. Besides req/s, the servers' CPU time per answer (all their
processes, from /proc, over each wrk run): on a shared machine it moves far less than req/s, and
``× bare (CPU)`` is the throughput ratio one core would give. The limiter is on for ``/api/v2`` and
counts every request (a key with a limit of 10^9, and the anonymous limit raised alike), but never
trips. wrk loads each target in interleaved rounds; medians of req/s, p99 and CPU per answer. Also the
resident memory of one and of two workers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, body_size, latest_export, machine, pool_dir, service  # noqa: E402
from load import Run, Target, sample_ids, summarize, wrk  # noqa: E402
from servers import Server, cpu_seconds, proc_status, process_tree, uvicorn  # noqa: E402

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


def former_procfile(directory: Path, log: Path) -> Server:
    """A variant: the Procfile's former line, the uvicorn CLI with uvicorn's own access log (the default)."""
    env = dict(service(directory, log).env)
    argv = [sys.executable, "-m", "uvicorn", "--factory", "sudokupool.app:create_app", "--host", "127.0.0.1",
            "--port", "{port}", "--no-proxy-headers", "--no-server-header"]  # fmt: skip
    return Server("former Procfile", argv, env=env, probe="/api/v1/health", log=log)


def tree_cpu(pid: int) -> float:
    return sum(cpu_seconds(p) for p in process_tree(pid))


def measure(found: list[tuple[Server, Target]], *, count: int, seconds: float, connections: int
            ) -> tuple[dict[str, list[Run]], dict[str, list[float]]]:  # fmt: skip
    """Interleaved rounds, order rotated each round: wrk's runs and the servers' CPU µs per answer."""
    runs: dict[str, list[Run]] = {t.name: [] for _, t in found}
    cpu: dict[str, list[float]] = {t.name: [] for _, t in found}
    for _, target in found:
        wrk(target, seconds=1, connections=connections)
    for n in range(count):
        for server, target in found[n % len(found) :] + found[: n % len(found)]:
            pids = process_tree(server.pid)
            before = sum(cpu_seconds(p) for p in pids)
            run = wrk(target, seconds=seconds, connections=connections)
            used = sum(cpu_seconds(p) for p in pids) - before
            runs[target.name].append(run)
            cpu[target.name].append(1e6 * used / max(run.requests, 1))
            print(f"  round {n + 1} {target.name:36} {run.rps:8.0f} req/s  p99 {run.p99_ms:7.2f} ms  "
                  f"{cpu[target.name][-1]:6.1f} µs CPU/req")  # fmt: skip
    return runs, cpu


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (a server's workers)."""
    return sum(proc_status(p).get("VmRSS", 0) for p in process_tree(pid))


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
    found: list[tuple[Server, Target]] = []
    try:
        for name, env in VARIANTS.items():
            svc = service(directory, OUT / f"server-{name.replace(' ', '').replace(',', '-')}.log", env=env).start()
            servers.append(svc)
            found.append((svc, Target(f"{name}: v2 random", svc.base, "/api/v2/puzzles/random", key)))
            found.append((svc, Target(f"{name}: v2 by id", svc.base, "/api/v2/puzzles/{id}", key, ids)))
        former = former_procfile(directory, OUT / "server-former-procfile.log").start()
        servers.append(former)
        name = "variant: uvicorn CLI, uvicorn's access log (the former Procfile line)"
        found.append((former, Target(f"{name}: v2 random", former.base, "/api/v2/puzzles/random", key)))
        # Clients that take gzip (browsers, requests, httpx, curl --compressed) get the member as held.
        shipped = servers[0]
        gzip = {**key, "Accept-Encoding": "gzip"}
        found.append((shipped, Target("uvicorn, gzip client: v2 random", shipped.base, "/api/v2/puzzles/random", gzip)))
        found.append(
            (shipped, Target("uvicorn, gzip client: v2 by id", shipped.base, "/api/v2/puzzles/{id}", gzip, ids))
        )
        size = body_size(shipped)
        gzip_size = body_size(shipped, {"Accept-Encoding": "gzip"})
        bare = uvicorn("bare", "bare_app:app", "--app-dir", str(BENCH), env={"BENCH_BODY_SIZE": str(size)},
                       probe="/", log=OUT / "bare.log").start()  # fmt: skip
        servers.append(bare)
        small = {"BENCH_BODY_SIZE": str(gzip_size)}
        bare_small = uvicorn("bare, small body", "bare_app:app", "--app-dir", str(BENCH), env=small, probe="/",
                             log=OUT / "bare-small.log").start()  # fmt: skip
        servers.append(bare_small)
        bare_g = granian_bare(size, OUT / "bare-granian.log").start()
        servers.append(bare_g)
        found[:0] = [(bare, Target("bare ASGI app on uvicorn", bare.base, "/")),
                     (bare_small, Target(f"bare ASGI app on uvicorn, {gzip_size} B body", bare_small.base, "/")),
                     (bare_g, Target("bare ASGI app on granian", bare_g.base, "/"))]  # fmt: skip
        runs, cpu = measure(found, count=args.rounds, seconds=args.seconds, connections=args.connections)
    finally:
        for server in servers:
            server.stop()
    results = {name: {**summarize(r), "cpu_us": round(statistics.median(cpu[name]), 1)} for name, r in runs.items()}
    memory = workers_memory(directory)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = OUT / f"{stamp}-servers.json"
    path.write_text(json.dumps({"machine": machine(), "pool": str(directory), "body_size": size,
                                "throughput": results, "memory": memory}, indent=2))  # fmt: skip
    base = results["bare ASGI app on uvicorn"]
    print("| target | req/s (median) | min-max | p99 ms | × bare (req/s) | server CPU µs/answer | × bare (CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, s in results.items():
        errors = f" ({s['errors']} errors, {s['status_errors']} non-2xx)" if s["errors"] or s["status_errors"] else ""
        print(f"| {name}{errors} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p99_ms']} "
              f"| {s['rps'] / base['rps']:.2f} | {s['cpu_us']} | {base['cpu_us'] / s['cpu_us']:.2f} |")  # fmt: skip
    print("\nresident memory (all processes), bytes:", json.dumps(memory))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
