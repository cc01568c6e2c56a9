"""Symmetry of a clue pattern: which of the eight symmetries of the square map the givens onto themselves.

The symmetries that fix a pattern always form a subgroup of the square's symmetry group, and that group
has exactly ten subgroups, one per name in ``SYMMETRIES`` (see docs/export-format.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sudokupool.sudoku.grid import EMPTY


def _cell_map(f: Callable[[int, int], tuple[int, int]]) -> tuple[int, ...]:
    return tuple(f(c // 9, c % 9)[0] * 9 + f(c // 9, c % 9)[1] for c in range(81))


# The eight symmetries of the square as cell permutations (rows and columns counted from 0).
_IDENTITY: Final = _cell_map(lambda r, c: (r, c))
_ROT90: Final = _cell_map(lambda r, c: (c, 8 - r))
_ROT180: Final = _cell_map(lambda r, c: (8 - r, 8 - c))
_ROT270: Final = _cell_map(lambda r, c: (8 - c, r))
_MIRROR_H: Final = _cell_map(lambda r, c: (8 - r, c))
_MIRROR_V: Final = _cell_map(lambda r, c: (r, 8 - c))
_DIAG_MAIN: Final = _cell_map(lambda r, c: (c, r))
_DIAG_ANTI: Final = _cell_map(lambda r, c: (8 - c, 8 - r))

# Each class name with the group of cell maps that leaves such a pattern unchanged.
_GROUPS: Final[dict[str, tuple[tuple[int, ...], ...]]] = {
    "none": (_IDENTITY,),
    "rotational-180": (_IDENTITY, _ROT180),
    "rotational-90": (_IDENTITY, _ROT90, _ROT180, _ROT270),
    "mirror-horizontal": (_IDENTITY, _MIRROR_H),
    "mirror-vertical": (_IDENTITY, _MIRROR_V),
    "mirror-both": (_IDENTITY, _MIRROR_H, _MIRROR_V, _ROT180),
    "diagonal-main": (_IDENTITY, _DIAG_MAIN),
    "diagonal-anti": (_IDENTITY, _DIAG_ANTI),
    "diagonal-both": (_IDENTITY, _DIAG_MAIN, _DIAG_ANTI, _ROT180),
    "full": (_IDENTITY, _ROT90, _ROT180, _ROT270, _MIRROR_H, _MIRROR_V, _DIAG_MAIN, _DIAG_ANTI),
}

SYMMETRIES: Final[tuple[str, ...]] = tuple(_GROUPS)
_BY_GROUP: Final[dict[frozenset[tuple[int, ...]], str]] = {frozenset(g): name for name, g in _GROUPS.items()}


#: A grid's clue pattern, byte by byte: ``1`` for a given (any character but the empty cell's), ``0`` for an empty cell.
_PATTERN: Final = bytes(ord("0") if byte == ord(EMPTY) else ord("1") for byte in range(256))
#: Which symmetries fix a pattern (:func:`_fixing`'s tuple) to the name of the group they make.
_BY_FIXING: Final = {
    tuple(m in group for m in (_ROT180, _MIRROR_H, _MIRROR_V, _DIAG_MAIN, _DIAG_ANTI, _ROT90)): name
    for name, group in _GROUPS.items()
}


def symmetry_class(puzzle: str) -> str:
    """The name of the group of square symmetries that map the clue pattern of ``puzzle`` onto itself."""
    data = puzzle.encode("utf-8", "surrogatepass")
    if len(data) == 81:  # a byte a cell
        return _BY_FIXING[_fixing(data.translate(_PATTERN))]
    givens = frozenset(i for i, ch in enumerate(puzzle) if ch != EMPTY)
    return _BY_GROUP[frozenset(m for m in _GROUPS["full"] if all(m[i] in givens for i in givens))]


def _fixing(pattern: bytes) -> tuple[bool, ...]:
    """Whether each of the half turn, the two mirrors, the two diagonals and the quarter turn maps ``pattern`` (81
    cells, row by row) onto itself: the pattern moved by each, by slices, is the pattern (a quarter turn fixes it when
    the three-quarter turn does, its inverse)."""
    rows_reversed = b"".join([pattern[start : start + 9] for start in range(72, -1, -9)])
    transposed = b"".join([pattern[column::9] for column in range(9)])
    quarter = b"".join([transposed[start : start + 9] for start in range(72, -1, -9)])
    return (
        pattern[::-1] == pattern,
        rows_reversed == pattern,
        rows_reversed[::-1] == pattern,
        transposed == pattern,
        transposed[::-1] == pattern,
        quarter == pattern,
    )


def orbit(cell: int, symmetry: str) -> tuple[int, ...]:
    """The cells ``cell`` is mapped to by the group named ``symmetry``, sorted; raises KeyError on a bad name."""
    return tuple(sorted({m[cell] for m in _GROUPS[symmetry]}))


def orbits(symmetry: str) -> tuple[tuple[int, ...], ...]:
    """All orbits of the group named ``symmetry``: a partition of the 81 cells, in order of first cell."""
    seen: set[int] = set()
    result: list[tuple[int, ...]] = []
    for cell in range(81):
        if cell not in seen:
            o = orbit(cell, symmetry)
            seen.update(o)
            result.append(o)
    return tuple(result)
