"""Two versions of the grader side by side on the same puzzles: CPU time per puzzle of each.

Run:
    python bench/grader_ab.py --file bench/data/sudoku-exchange-se-fresh.txt OTHER/src src

Each source tree (a directory holding the ``sudokupool`` package, e.g. another checkout's ``src``)
gets one long-lived process; they grade the same chunk of puzzles in turn, the first of the pair
alternating from chunk to chunk, so that the other jobs of a shared machine weigh on both alike.
Prints each one's median, p95 and max per puzzle, and the second's p95 and total over the first's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench_grader import pct, read

WORKER = """
import json, sys, time
from sudokupool.sudoku.grader import grade
for line in sys.stdin:
    times = []
    for puzzle in json.loads(line):
        start = time.process_time()
        grade(puzzle)
        times.append(time.process_time() - start)
    print(json.dumps(times), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--chunk", type=int, default=10, help="puzzles per turn")
    parser.add_argument("src", nargs=2, type=Path, help="two source trees: the first is the baseline")
    args = parser.parse_args()

    puzzles = [puzzle for puzzle, _ in read(args.file)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER],
            env={**os.environ, "PYTHONPATH": str(src.resolve())},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for src in args.src
    ]
    times: list[list[float]] = [[], []]
    for turn, first in enumerate(range(0, len(puzzles), args.chunk)):
        chunk = json.dumps(puzzles[first : first + args.chunk]) + "\n"
        for side in (0, 1) if turn % 2 == 0 else (1, 0):
            worker = workers[side]
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(chunk)
            worker.stdin.flush()
            times[side] += json.loads(worker.stdout.readline())
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    for src, side in zip(args.src, times, strict=True):
        ms = [1000 * t for t in side]
        print(
            f"{src}: median {statistics.median(ms):.1f} ms, p95 {pct(ms, 0.95):.0f} ms, max {max(ms):.0f} ms, "
            f"total {sum(side):.2f} s"
        )
    base, other = times
    print(f"second / first: p95 {pct(other, 0.95) / pct(base, 0.95):.3f}, total {sum(other) / sum(base):.3f}")


if __name__ == "__main__":
    main()
