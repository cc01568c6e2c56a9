"""Two versions of the service side by side: this checkout against an earlier commit, same pool, one run.

    python bench/ab.py BASELINE [--pool 1m-lean] [--rounds 5] [--seconds 5]

BASELINE is any git revision. It is checked out into a temporary worktree and served from there
(``PYTHONPATH`` at its ``src/``) next to this checkout's service, both as the harness starts them. wrk
then alternates between the two on v2 by id (random ids from the pool), v2 random (both with a key
whose limit never trips) and v2 random without a key (anonymous, at a limit that never trips), in the
harness's rotated rounds (a warm-up first), and prints the median req/s of each and the ratio
this/baseline, and the median server CPU time per answer (utime + stime of the service's process over
each wrk run, from /proc) and its ratio: on a machine shared with other work req/s swings with the
neighbours, CPU per answer far less. Both services share the machine, so drift hits both alike; only a
ratio from one run means anything.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, baseline_tree, latest_export, pool_dir, service  # noqa: E402
from load import Run, Target, sample_ids, summarize, wrk  # noqa: E402
from servers import cpu_seconds  # noqa: E402


def rounds(
    targets: list[Target], pids: dict[str, int], *, count: int, seconds: float, connections: int
) -> tuple[dict[str, list[Run]], dict[str, list[float]]]:
    """``harness.rounds`` that also reads the CPU µs per answer of each target's server (``pids`` by name)."""
    runs: dict[str, list[Run]] = {t.name: [] for t in targets}
    cpu: dict[str, list[float]] = {t.name: [] for t in targets}
    for target in targets:
        wrk(target, seconds=1, connections=connections)
    for n in range(count):
        for target in targets[n % len(targets) :] + targets[: n % len(targets)]:
            before = cpu_seconds(pids[target.name])
            run = wrk(target, seconds=seconds, connections=connections)
            used = (cpu_seconds(pids[target.name]) - before) * 1e6 / max(run.requests, 1)
            runs[target.name].append(run)
            cpu[target.name].append(used)
            print(f"  round {n + 1} {target.name:32} {run.rps:9.0f} req/s  {used:6.1f} CPU µs/answer")
    return runs, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pool", default="1m-lean")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    # Anonymous requests are counted as usual, with a limit that never trips (as in cpu_per_request.py).
    os.environ["SUDOKUPOOL_LIMIT_ANONYMOUS"] = "1000000000"
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    with baseline_tree(args.baseline) as tree:
        this = service(directory, OUT / "ab-this.log")
        base = service(directory, OUT / "ab-baseline.log")
        base.env["PYTHONPATH"] = str(tree / "src")
        this.start()
        base.start()
        try:
            key = {"X-API-Key": KEY}
            targets = [
                Target("this: v2 by id", this.base, "/api/v2/puzzles/{id}", key, ids),
                Target("baseline: v2 by id", base.base, "/api/v2/puzzles/{id}", key, ids),
                Target("this: v2 random", this.base, "/api/v2/puzzles/random", key),
                Target("baseline: v2 random", base.base, "/api/v2/puzzles/random", key),
                Target("this: v2 random, anonymous", this.base, "/api/v2/puzzles/random"),
                Target("baseline: v2 random, anonymous", base.base, "/api/v2/puzzles/random"),
            ]
            pids = {t.name: (this if t.name.startswith("this") else base).pid for t in targets}
            runs, cpu = rounds(targets, pids, count=args.rounds, seconds=args.seconds, connections=32)
        finally:
            this.stop()
            base.stop()
    summary = {name: summarize(found) for name, found in runs.items()}
    for name, found in summary.items():
        if found["errors"] or found["status_errors"]:
            raise RuntimeError(f"{name}: {found['status_errors']} non-2xx, {found['errors']} errors")
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, medians")
    for path in ("v2 by id", "v2 random", "v2 random, anonymous"):
        this_rps, base_rps = summary[f"this: {path}"]["rps"], summary[f"baseline: {path}"]["rps"]
        this_cpu, base_cpu = (statistics.median(cpu[f"{side}: {path}"]) for side in ("this", "baseline"))
        print(
            f"  {path:20s} req/s this {this_rps:8,.0f}  baseline {base_rps:8,.0f}  ratio {this_rps / base_rps:.3f}"
            f"   CPU µs/answer this {this_cpu:6.1f}  baseline {base_cpu:6.1f}  ratio {this_cpu / base_cpu:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
