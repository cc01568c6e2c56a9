"""The request path's own cost with metrics on and off, and at an earlier revision: CPU µs per request.

    python bench/metrics_inprocess.py BASELINE --rounds 15 --requests 20000   # docs/operations.md, "Cost"
    python bench/metrics_inprocess.py BASELINE --baseline-on ...   # BASELINE with metrics on, against "on"

Three worker processes (this checkout with ``SUDOKUPOOL_METRICS_PORT`` set, the same without it, and
BASELINE from a temporary worktree) each build the app on the demo pool and, on command, send requests
through it in process (no server, no sockets): v2 by id and v2 random with a key whose limit never
trips. Each batch is timed in the process's own CPU time, which other load on a shared machine moves far
less than wall time; batches alternate between the three, order rotated each round. Prints medians and
the differences, which the server's CPU per answer (bench/metrics_cost.py) turns into a share.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH)]

KEY = "bench-key-with-a-limit-that-never-trips"
PATHS = ("v2 by id", "v2 random")


async def worker(ids: list[str]) -> None:
    from sudokupool.app import create_app
    from sudokupool.config import Settings
    from sudokupool.keys import digest

    settings = Settings.from_environ(
        {**os.environ, "SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
         "SUDOKUPOOL_SYNC_INTERVAL": "0", "SUDOKUPOOL_LOG_LEVEL": "warning"}
    )  # fmt: skip
    app = create_app(settings)
    await app.startup()

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        pass

    def scope(path: str) -> dict[str, object]:
        return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
                "headers": [(b"host", b"bench"), (b"x-api-key", KEY.encode())], "client": ("127.0.0.1", 5000),
                "server": ("127.0.0.1", 8000), "scheme": "http", "http_version": "1.1", "root_path": ""}  # fmt: skip

    paths = {"v2 by id": [f"/api/v2/puzzles/{i}" for i in ids], "v2 random": ["/api/v2/puzzles/random"]}
    print("ready", flush=True)
    for line in sys.stdin:
        name, count = line.rsplit(" ", 1)
        chosen = paths[name]
        scopes = [scope(chosen[n % len(chosen)]) for n in range(int(count))]
        start = time.process_time()
        for each in scopes:
            await app.http(each, receive, send)
        used = time.process_time() - start
        print(json.dumps(1e6 * used / len(scopes)), flush=True)
    await app.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision without metrics")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument(
        "--baseline-on", action="store_true", help="BASELINE with metrics on too: what a change to metrics costs"
    )
    args = parser.parse_args(argv)
    from harness import OUT, baseline_tree, latest_export, pool_dir
    from load import sample_ids
    from servers import free_port

    directory = pool_dir("snapshots")
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    with baseline_tree(args.baseline) as tree:
        variants = {
            "metrics on": (ROOT / "src", {"SUDOKUPOOL_METRICS_PORT": str(free_port())}),
            "metrics off": (ROOT / "src", {}),
            "baseline": (tree / "src", {"SUDOKUPOOL_METRICS_PORT": str(free_port())} if args.baseline_on else {}),
        }
        procs = {}
        for name, (src, env) in variants.items():
            full = {**os.environ, **env, "PYTHONPATH": str(src), "BENCH_IDS": str(ids),
                    "SUDOKUPOOL_EXPORTS": str(directory)}  # fmt: skip
            if not env:
                full.pop("SUDOKUPOOL_METRICS_PORT", None)
            procs[name] = subprocess.Popen([sys.executable, __file__, "--worker"], env=full, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
        try:
            for proc in procs.values():
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            found: dict[str, list[float]] = {f"{v}: {p}": [] for v in variants for p in PATHS}
            order = [(v, p) for p in PATHS for v in variants]
            for n in range(args.rounds + 1):  # the first round warms up and is not counted
                for name, path in order[n % len(order) :] + order[: n % len(order)]:
                    proc = procs[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{path} {args.requests}\n")
                    proc.stdin.flush()
                    value = float(proc.stdout.readline())
                    if n:
                        found[f"{name}: {path}"].append(value)
        finally:
            for proc in procs.values():
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(30)
    median = {name: statistics.median(values) for name, values in found.items()}
    versus = "on" if args.baseline_on else "off"
    print(f"baseline {args.baseline} (metrics {versus}), {args.rounds} rounds x {args.requests} requests, "
          "CPU µs per request, medians")  # fmt: skip
    print(f"| path | on | off | baseline | on - off | {versus} - baseline |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in PATHS:
        on, off, base = (median[f"{v}: {path}"] for v in variants)
        compared = on if args.baseline_on else off
        print(f"| {path} | {on:.2f} | {off:.2f} | {base:.2f} | {on - off:+.2f} | {compared - base:+.2f} |")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        asyncio.run(worker([line.split()[0] for line in Path(os.environ["BENCH_IDS"]).read_text().splitlines()]))
    else:
        raise SystemExit(main())
