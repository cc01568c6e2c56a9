"""Grid basics shared by every part of the engine: cells, houses, peers, parsing and checks.

A grid is an 81-character string in row-major order. Digits are ``1``-``9``; an empty cell is
``.`` (``0`` is accepted on input and normalised to ``.``). Cells are numbered 0..80; a cell's
human name is ``r{row}c{col}`` with rows and columns counted from 1.
"""

from __future__ import annotations

from typing import Final

DIGITS: Final = "123456789"
EMPTY: Final = "."
ALPHABET: Final = frozenset(DIGITS + EMPTY)

ROWS: Final[tuple[tuple[int, ...], ...]] = tuple(tuple(r * 9 + c for c in range(9)) for r in range(9))
COLS: Final[tuple[tuple[int, ...], ...]] = tuple(tuple(r * 9 + c for r in range(9)) for c in range(9))
BOXES: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple((br * 3 + r) * 9 + bc * 3 + c for r in range(3) for c in range(3)) for br in range(3) for bc in range(3)
)
# Houses in a fixed order: rows 0-8, columns 9-17, boxes 18-26.
HOUSES: Final[tuple[tuple[int, ...], ...]] = ROWS + COLS + BOXES

ROW_OF: Final[tuple[int, ...]] = tuple(i // 9 for i in range(81))
COL_OF: Final[tuple[int, ...]] = tuple(i % 9 for i in range(81))
BOX_OF: Final[tuple[int, ...]] = tuple((i // 27) * 3 + (i % 9) // 3 for i in range(81))

PEERS: Final[tuple[frozenset[int], ...]] = tuple(
    frozenset(
        j for j in range(81) if j != i and (ROW_OF[j] == ROW_OF[i] or COL_OF[j] == COL_OF[i] or BOX_OF[j] == BOX_OF[i])
    )
    for i in range(81)
)
# The cells of each house and each cell's peers as 81-bit masks (bit c for cell c).
HOUSE_MASK: Final[tuple[int, ...]] = tuple(sum(1 << c for c in house) for house in HOUSES)
PEER_MASK: Final[tuple[int, ...]] = tuple(sum(1 << p for p in PEERS[c]) for c in range(81))

_NORMALISE = str.maketrans("0", ".")


class GridError(ValueError):
    """A string that is not a well-formed 81-cell grid."""


def cell_name(cell: int) -> str:
    """``r{row}c{col}``, 1-based, for cell index 0..80."""
    return f"r{cell // 9 + 1}c{cell % 9 + 1}"


def house_name(house: int) -> str:
    """``row 3``, ``column 5`` or ``box 7`` (1-based) for house index 0..26."""
    kind, index = divmod(house, 9)
    return f"{('row', 'column', 'box')[kind]} {index + 1}"


def parse_grid(text: str) -> str:
    """Return the normalised grid for ``text`` or raise :class:`GridError`.

    Accepts ``0`` or ``.`` for empty cells; whitespace is not allowed inside the grid.
    """
    grid = text.strip().translate(_NORMALISE)
    if len(grid) != 81:
        raise GridError(f"a grid has 81 cells, got {len(grid)}")
    if not ALPHABET.issuperset(grid):
        raise GridError("a grid holds only the digits 1-9 and '.' or '0' for empty cells")
    return grid


def has_conflict(grid: str) -> bool:
    """True when some digit appears twice in a row, column or box."""
    return first_conflict(grid) is not None


def first_conflict(grid: str) -> str | None:
    """``digit 5 appears twice in row 1`` for the first clash of givens (rows, then columns, then boxes), or None."""
    for index, house in enumerate(HOUSES):
        seen: set[str] = set()
        for i in house:
            ch = grid[i]
            if ch == EMPTY:
                continue
            if ch in seen:
                return f"digit {ch} appears twice in {house_name(index)}"
            seen.add(ch)
    return None


def is_complete_solution(grid: str) -> bool:
    """True when ``grid`` is 81 digits with every row, column and box holding 1-9 once."""
    if len(grid) != 81 or EMPTY in grid:
        return False
    full = set(DIGITS)
    return all({grid[i] for i in house} == full for house in HOUSES)


def agrees(puzzle: str, solution: str) -> bool:
    """True when every given of ``puzzle`` holds the same digit in ``solution``."""
    return all(p in (EMPTY, s) for p, s in zip(puzzle, solution, strict=True))


def clue_count(puzzle: str) -> int:
    """Number of givens in the puzzle."""
    return 81 - puzzle.count(EMPTY)
