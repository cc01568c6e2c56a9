"""Kept puzzles per CPU-second for each level, for a build that grades every puzzle and discards the unwanted
levels (as ``build`` did) and for one that stops work on a puzzle as soon as it cannot be wanted
(``build --difficulty LEVEL`` now), on the same raw puzzles; and the share of minimal puzzles.

Run:
    python bench/build_yield.py --count 300 [--seed 20261126] [--symmetry rotational-180]

One process (the worker's own function, ``commands.orders.make_chunk``), CPU time by ``time.process_time``.
A build with ``--jobs N`` on N free cores keeps about N times as many a wall-clock second.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from sudokupool.commands.orders import Order, is_minimal, make_chunk
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.generator import DEFAULT_SYMMETRY


def run(seed: int, count: int, order: Order) -> tuple[Counter[str], float, list[str]]:
    """Kept puzzles per level, CPU seconds, and the kept puzzles."""
    started = time.process_time()
    made = make_chunk((seed, 0, count, order))
    seconds = time.process_time() - started
    kept = [m for m in made if m.grade is not None]
    return Counter(m.outcome for m in kept), seconds, [m.puzzle for m in kept]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="raw puzzles per run")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--symmetry", default=DEFAULT_SYMMETRY)
    args = parser.parse_args()
    every, seconds, puzzles = run(args.seed, args.count, Order(args.symmetry))
    minimal = sum(map(is_minimal, puzzles))
    print(
        f"{args.count} raw puzzles, symmetry {args.symmetry}: {seconds:.1f} CPU s graded to the end "
        f"({seconds / args.count * 1000:.0f} ms each); minimal {minimal}/{len(puzzles)} ({minimal / len(puzzles):.1%})"
    )
    for level, name in enumerate(DIFFICULTIES, start=1):
        steered, steered_seconds, _ = run(args.seed, args.count, Order(args.symmetry, frozenset({level})))
        assert steered[name] == every[name]  # the same puzzles are kept
        before, after = every[name] / seconds, steered[name] / steered_seconds
        print(
            f"  {name:<7} {every[name]:>4} kept: {before:5.2f}/CPU s graded to the end, {after:5.2f}/CPU s "
            f"with --difficulty {name.lower()} ({steered_seconds:.1f} CPU s): x{after / before:.2f}"
        )


if __name__ == "__main__":
    main()
