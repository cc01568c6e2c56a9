"""The SE-like rating of ``python -m bench se-like``: puzzles of the Sudoku Exchange sample (bench/data) get the
rating of the technique Sudoku Explainer rates them by, and the rating is the largest of the steps'."""

from __future__ import annotations

import pytest

from bench.se_like import Table, se_like

# (puzzle, its SE rating in the set, the SE-like rating, the technique of the hardest step)
CASES = [
    ("9..8...47..4.7.1....31...9........5..1.457.6..7........5...19....9.6.5..14...9..8", 5.2, 5.2, "Jellyfish"),
    (".3.1.9.7..........76..4..29..6...9..2.39.15.6....8....3..2.8..5..94163...........", 6.6, 6.7, "xy chain"),
    ("1...79.6..58..4...9..8..2......8..7...94.75...6..5......7..3..4...7..35..3.56...9", 7.7, 7.6, "Nishio"),
    (
        ".3.....5.2.4...9.7.7.....4....2.7...3...1...2..24.65......6....1.......665.3.4.79",
        8.2,
        8.3,
        "Forcing Chain Contradiction",
    ),
]


@pytest.mark.parametrize(("puzzle", "se", "rating", "technique"), CASES)
def test_a_puzzle_is_rated_by_its_hardest_step(puzzle: str, se: float, rating: float, technique: str) -> None:
    got, steps = se_like(puzzle, Table())
    assert got == rating and abs(got - se) < 0.15  # within one tenth of SE
    assert got == max(r for r, _, _ in steps)
    assert technique in {name for r, name, _ in steps if r == got}


def test_the_table_decides_the_chains_rating() -> None:
    puzzle = CASES[1][0]
    assert se_like(puzzle, Table(xy_chain=7.0, xy_cycle=7.0, y_chain=7.0, y_cycle=7.0))[0] > 7.0
