"""Server CPU time per request, by path: where the service's microseconds go beside the bare app's.

    python bench/cpu_per_request.py [--pool snapshots] [--rounds 3] [--seconds 6]

req/s says how fast; this says how much CPU the server process spent for each answer (utime + stime
from /proc over a wrk run, divided by the requests), which is what separates the work of a path from
the wakeups and syscalls every answer pays. Every target runs in every round, order rotated; medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, pool_dir, service  # noqa: E402
from load import Target, wrk  # noqa: E402
from servers import uvicorn  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default=str(BENCH.parent / "snapshots"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    os.environ["SUDOKUPOOL_LIMIT_ANONYMOUS"] = "1000000000"  # anonymous requests are counted, never refused
    svc = service(pool_dir(args.pool), OUT / "cpu-service.log").start()
    bare = uvicorn("bare", "bare_app:app", "--app-dir", str(BENCH), env={"BENCH_BODY_SIZE": "700"}, probe="/",
                   log=OUT / "cpu-bare.log").start()  # fmt: skip
    key = {"X-API-Key": KEY}
    targets = [
        (bare, Target("bare ASGI app", bare.base, "/")),
        (svc, Target("v1 stats", svc.base, "/api/v1/stats")),
        (svc, Target("v2 stats, anonymous", svc.base, "/api/v2/stats")),
        (svc, Target("v2 stats, key", svc.base, "/api/v2/stats", key)),
        (svc, Target("v1 random", svc.base, "/api/v1/puzzles/random")),
        (svc, Target("v2 random, key", svc.base, "/api/v2/puzzles/random", key)),
    ]
    results: dict[str, list[tuple[float, float]]] = {t.name: [] for _, t in targets}
    try:
        for n in range(args.rounds):
            for server, target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                before = cpu_seconds(server.pid)
                run = wrk(target, seconds=args.seconds, connections=32)
                used = cpu_seconds(server.pid) - before
                if run.status_errors or run.errors:
                    raise RuntimeError(f"{target.name}: {run.status_errors} non-2xx, {run.errors} errors")
                results[target.name].append((run.rps, used / run.requests * 1e6))
    finally:
        svc.stop()
        bare.stop()
    print("| target | req/s (median) | server CPU µs per request (median) |\n|---|---:|---:|")
    for name, runs in results.items():
        rps = statistics.median(r for r, _ in runs)
        micros = statistics.median(u for _, u in runs)
        print(f"| {name} | {rps:,.0f} | {micros:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
