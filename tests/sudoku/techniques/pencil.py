"""Test helper for the technique tests: hand-built candidate grids.

Start from an empty grid (every digit possible everywhere) and pencil in exactly the pattern a
test needs.
"""

from __future__ import annotations

from collections.abc import Iterable

from sudokupool.sudoku.candidates import ALL, BIT, Candidates
from sudokupool.sudoku.grid import HOUSES, cell_name


def cell(name: str) -> int:
    return (int(name[1]) - 1) * 9 + int(name[3]) - 1


def row(n: int) -> int:
    return n - 1


def col(n: int) -> int:
    return 8 + n


def box(n: int) -> int:
    return 17 + n


class Pencil:
    """A blank candidate grid with helpers to shape it."""

    def __init__(self) -> None:
        self.cg = Candidates([0] * 81, [ALL] * 81)

    def set(self, name: str, digits: Iterable[int]) -> Pencil:
        """Give cell ``name`` exactly ``digits`` as candidates."""
        mask = 0
        for d in digits:
            mask |= BIT[d]
        self.cg.cands[cell(name)] = mask
        return self

    def only(self, digit: int, house: int, names: Iterable[str]) -> Pencil:
        """In ``house``, keep ``digit`` only in the cells ``names``."""
        keep = {cell(n) for n in names}
        for c in HOUSES[house]:
            if c not in keep:
                self.cg.cands[c] &= ~BIT[digit]
        return self


def moves(pairs: Iterable[tuple[int, int]]) -> set[tuple[str, int]]:
    """(cell name, digit) for a step's placements or eliminations."""
    return {(cell_name(c), d) for c, d in pairs}


def from_pencilmarks(text: str) -> Candidates:
    """A candidate grid from a pencil-mark diagram (rows of ``|``-separated cells, as HoDoKu prints
    them): a cell showing one digit is filled, any other lists its candidates."""
    values: list[int] = []
    cands: list[int] = []
    for line in text.splitlines():
        if not line.strip().startswith("|"):
            continue
        for token in line.replace("|", " ").split():
            digits = [int(ch) for ch in token if ch.isdigit()]
            if len(digits) == 1:
                values.append(digits[0])
                cands.append(0)
            else:
                values.append(0)
                cands.append(sum(BIT[d] for d in digits))
    assert len(values) == 81, len(values)
    return Candidates(values, cands)
