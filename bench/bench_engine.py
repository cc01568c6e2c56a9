"""Speed of the engine core on generated puzzles: generation, uniqueness check, solve, canonical form.

Run: python bench/bench_engine.py [COUNT] [FIRST_SEED]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.solver import count_solutions, solve


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def report(name: str, samples: list[float]) -> None:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[int(len(ms) * 0.9)]
    print(f"{name:<18} median {statistics.median(ms):7.2f} ms  p90 {p90:7.2f} ms  max {ms[-1]:7.2f} ms")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    gen: list[float] = []
    puzzles: list[str] = []
    for seed in range(first, first + count):
        start = time.perf_counter()
        puzzles.append(generate(seed).puzzle)
        gen.append(time.perf_counter() - start)
    report("generate", gen)
    report("count_solutions", [timed(lambda p=p: count_solutions(p)) for p in puzzles])
    report("solve", [timed(lambda p=p: solve(p)) for p in puzzles])
    report("canonical_form", [timed(lambda p=p: canonical_form(p)) for p in puzzles])


if __name__ == "__main__":
    main()
