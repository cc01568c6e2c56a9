"""Grading speed per difficulty on generated puzzles, with every solve path replayed.

Run: python bench/bench_grader.py [COUNT] [FIRST_SEED]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter, defaultdict

from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.replay import replay


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    times: dict[str, list[float]] = defaultdict(list)
    hardest: Counter[str] = Counter()
    bad = 0
    for seed in range(first, first + count):
        g = generate(seed)
        start = time.perf_counter()
        result = grade(g.puzzle)
        elapsed = time.perf_counter() - start
        key = result.difficulty or "unsolved"
        times[key].append(elapsed)
        hardest[result.hardest_technique or "unsolved"] += 1
        errors = replay(g.puzzle, g.solution, result.solve_path) if result.solved else []
        if errors:
            bad += 1
            print(seed, g.puzzle, errors[:3])
    total = sum(len(v) for v in times.values())
    for key in ("Easy", "Medium", "Hard", "Expert", "unsolved"):
        values = times.get(key, [])
        if values:
            print(
                f"{key:9} n={len(values):5} ({100 * len(values) / total:5.1f}%)  "
                f"median {1000 * statistics.median(values):7.2f} ms  max {1000 * max(values):8.2f} ms"
            )
    print("hardest technique:", dict(hardest.most_common()))
    print("replay failures:", bad)


if __name__ == "__main__":
    main()
