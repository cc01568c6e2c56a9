"""Validity-preserving transformations of a grid: layout permutations and digit relabelling.

A layout transformation is an optional transposition followed by a permutation of the rows that keeps
bands together (bands reordered, rows reordered within each band) and likewise for columns. With the
relabelling of digits these map every puzzle to an equivalent one with the same solve path shape, so
the canonical form (canonical.py) is the same for all of them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sudokupool.sudoku.grid import EMPTY

IDENTITY_LINES: tuple[int, ...] = tuple(range(9))
IDENTITY_DIGITS: tuple[int, ...] = tuple(range(1, 10))


def random_line_order(rng: random.Random) -> tuple[int, ...]:
    """A random order of the nine rows (or columns) that keeps bands (stacks) together."""
    chutes = [0, 1, 2]
    rng.shuffle(chutes)
    order: list[int] = []
    for chute in chutes:
        lines = [chute * 3, chute * 3 + 1, chute * 3 + 2]
        rng.shuffle(lines)
        order.extend(lines)
    return tuple(order)


def _is_chute_order(lines: tuple[int, ...]) -> bool:
    if sorted(lines) != list(IDENTITY_LINES):
        return False
    return all(len({lines[k] // 3 for k in range(band * 3, band * 3 + 3)}) == 1 for band in range(3))


@dataclass(frozen=True, slots=True)
class Transform:
    """One transformation: ``transpose``, then row ``rows[i]`` of that grid becomes row ``i`` (and the
    same for ``cols``), then digit ``d`` becomes ``digits[d - 1]``.
    """

    transpose: bool = False
    rows: tuple[int, ...] = IDENTITY_LINES
    cols: tuple[int, ...] = IDENTITY_LINES
    digits: tuple[int, ...] = IDENTITY_DIGITS
    # _source[i] is the input cell whose value lands in output cell i; _dest is its inverse.
    _source: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _dest: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _table: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (_is_chute_order(self.rows) and _is_chute_order(self.cols)):
            raise ValueError("rows and cols must be permutations of 0..8 that keep bands/stacks together")
        if sorted(self.digits) != list(IDENTITY_DIGITS):
            raise ValueError("digits must be a permutation of 1..9")
        source = []
        for i in range(81):
            r, c = self.rows[i // 9], self.cols[i % 9]
            source.append(c * 9 + r if self.transpose else r * 9 + c)
        dest = [0] * 81
        for i, s in enumerate(source):
            dest[s] = i
        object.__setattr__(self, "_source", tuple(source))
        object.__setattr__(self, "_dest", tuple(dest))
        object.__setattr__(self, "_table", {ord(str(d)): ord(str(self.digits[d - 1])) for d in range(1, 10)})

    def apply(self, grid: str) -> str:
        """The transformed grid (any 81-character grid; ``.`` stays empty)."""
        return "".join(grid[s] for s in self._source).translate(self._table)

    def map_cell(self, cell: int) -> int:
        """Where cell ``cell`` (0..80) of the input ends up in the output."""
        return self._dest[cell]

    def map_digit(self, digit: int) -> int:
        """The digit that ``digit`` (1..9) becomes."""
        return self.digits[digit - 1]


def random_transform(rng: random.Random, *, relabel: bool = True) -> Transform:
    """A uniformly random layout transformation, with a random relabelling unless ``relabel`` is false."""
    transpose = rng.random() < 0.5
    rows = random_line_order(rng)
    cols = random_line_order(rng)
    digits = list(IDENTITY_DIGITS)
    if relabel:
        rng.shuffle(digits)
    return Transform(transpose, rows, cols, tuple(digits))


def relabel_in_order(grid: str) -> str:
    """Relabel digits 1, 2, 3... in order of first appearance (row-major); empty cells stay ``.``."""
    labels: dict[str, str] = {}
    out = []
    for ch in grid:
        if ch == EMPTY:
            out.append(ch)
        else:
            label = labels.get(ch)
            if label is None:
                label = labels[ch] = str(len(labels) + 1)
            out.append(label)
    return "".join(out)
