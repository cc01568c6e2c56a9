"""Two versions of the service side by side: this checkout against an earlier commit, same pool, one run.

    python bench/ab.py BASELINE [--pool 1m-lean] [--rounds 5] [--seconds 5]

BASELINE is any git revision. It is checked out into a temporary worktree and served from there
(``PYTHONPATH`` at its ``src/``) next to this checkout's service, both as the harness starts them. wrk
then alternates between the two on v2 by id (random ids from the pool), v2 random (both with a key
whose limit never trips) and v2 random without a key (anonymous, at a limit that never trips), in the
harness's rotated rounds (``harness.rounds``, a warm-up first), and prints the median req/s of each
and the ratio this/baseline. Both services share the machine, so drift hits both alike; only a ratio
from one run means anything.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, baseline_tree, latest_export, pool_dir, rounds, service  # noqa: E402
from load import Target, sample_ids, summarize  # noqa: E402


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
            runs = rounds(targets, count=args.rounds, seconds=args.seconds, connections=32)
        finally:
            this.stop()
            base.stop()
    summary = {name: summarize(found) for name, found in runs.items()}
    for name, found in summary.items():
        if found["errors"] or found["status_errors"]:
            raise RuntimeError(f"{name}: {found['status_errors']} non-2xx, {found['errors']} errors")
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, median req/s")
    for path in ("v2 by id", "v2 random", "v2 random, anonymous"):
        this_rps, base_rps = summary[f"this: {path}"]["rps"], summary[f"baseline: {path}"]["rps"]
        print(f"  {path:20s} this {this_rps:8,.0f}  baseline {base_rps:8,.0f}  ratio {this_rps / base_rps:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
