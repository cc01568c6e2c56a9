"""What the metrics cost on the hot path: this checkout with metrics on and off, and an earlier revision.

    python bench/metrics_cost.py BASELINE --rounds 7 --seconds 4      # docs/operations.md, "Cost"

Three services on the same pool, each started as the Procfile starts it (``sudokupool serve``, one worker
unless ``--workers``): this checkout with ``SUDOKUPOOL_METRICS_PORT`` set, the same without it, and
BASELINE (a git revision without metrics, served from a temporary worktree) without it. wrk loads v2 by
id and v2 random (a key whose limit never trips) on each, in interleaved rounds with the order rotated,
and the run prints the median req/s and server CPU per answer of each, and the ratios on/off and
off/baseline. Only ratios from one run mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, baseline_tree, latest_export, pool_dir, service  # noqa: E402
from load import Target, sample_ids, summarize  # noqa: E402
from server_choice import measure  # noqa: E402
from servers import Server, free_port  # noqa: E402

PATHS = {"v2 by id": "/api/v2/puzzles/{id}", "v2 random": "/api/v2/puzzles/random"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision without metrics")
    parser.add_argument("--pool", default="snapshots")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    workers = {"WEB_CONCURRENCY": str(args.workers)}
    variants = {
        "metrics on": {**workers, "SUDOKUPOOL_METRICS_PORT": str(free_port())},
        "metrics off": workers,
        "baseline": workers,
    }
    servers: list[Server] = []
    found: list[tuple[Server, Target]] = []
    key = {"X-API-Key": KEY}
    with baseline_tree(args.baseline) as tree:
        try:
            for name, env in variants.items():
                svc = service(directory, OUT / f"metrics-{name.replace(' ', '-')}.log", env=env)
                if name == "baseline":
                    svc.env["PYTHONPATH"] = str(tree / "src")
                servers.append(svc.start())
                for path, template in PATHS.items():
                    found.append((svc, Target(f"{name}: {path}", svc.base, template, key, ids)))
            runs, cpu = measure(found, count=args.rounds, seconds=args.seconds, connections=args.connections)
        finally:
            for server in servers:
                server.stop()
    for name, found_runs in runs.items():
        summary = summarize(found_runs)
        if summary["errors"] or summary["status_errors"]:
            raise RuntimeError(f"{name}: {summary['status_errors']} non-2xx, {summary['errors']} errors")
    rps = {name: statistics.median(r.rps for r in found_runs) for name, found_runs in runs.items()}
    us = {name: statistics.median(values) for name, values in cpu.items()}
    print(f"\nbaseline {args.baseline}, pool {directory.name}, {args.workers} worker(s), "
          f"{args.rounds} rounds x {args.seconds:g} s, medians")  # fmt: skip
    print("| path | on req/s | off req/s | baseline req/s | on/off | off/baseline "
          "| on µs CPU/req | off µs CPU/req | baseline µs CPU/req |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in PATHS:
        on, off, base = (f"metrics on: {path}", f"metrics off: {path}", f"baseline: {path}")
        print(f"| {path} | {rps[on]:,.0f} | {rps[off]:,.0f} | {rps[base]:,.0f} | {rps[on] / rps[off]:.3f} "
              f"| {rps[off] / rps[base]:.3f} | {us[on]:.1f} | {us[off]:.1f} | {us[base]:.1f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
