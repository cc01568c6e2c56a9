"""What is wrong with a grid before any grading: malformed, clashing givens, no solution or several.

One home for the checks the grader, the hint and the HTTP engine share, so that each says the same
thing about the same grid, and a clash names every cell in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sudokupool.sudoku.grid import EMPTY, HOUSES, GridError, first_conflict, parse_grid
from sudokupool.sudoku.solver import solutions

Verdict = Literal["unique", "invalid", "no-solution", "multiple-solutions"]


@dataclass(frozen=True, slots=True)
class GridCheck:
    """``verdict`` and, unless unique, the ``reason`` in words; ``conflicts`` the cells of clashing digits
    (invalid grids only), ``grid`` the normalised grid (None when malformed), ``solution`` when unique."""

    verdict: Verdict
    reason: str | None
    grid: str | None = None
    conflicts: tuple[int, ...] = ()
    solution: str | None = None


def conflicting_cells(grid: str) -> tuple[int, ...]:
    """Every cell whose digit appears again in one of its houses, in cell order."""
    cells: set[int] = set()
    for house in HOUSES:
        seen: dict[str, int] = {}
        for i in house:
            ch = grid[i]
            if ch == EMPTY:
                continue
            if ch in seen:
                cells.update((seen[ch], i))
            else:
                seen[ch] = i
    return tuple(sorted(cells))


def check_grid(text: str, *, deadline: float | None = None) -> GridCheck:
    """Check ``text`` (81 cells, ``.`` or ``0`` for empty): well-formed, no clash, exactly one solution.

    The solver stops at a second solution, so a grid with many solutions (an empty one included) is told
    apart about as fast as a puzzle. Raises :class:`~sudokupool.sudoku.solver.TimeLimitExceeded` when
    ``time.monotonic()`` passes ``deadline`` before the count is known.
    """
    try:
        grid = parse_grid(text)
    except GridError as exc:
        return GridCheck("invalid", str(exc))
    clash = first_conflict(grid)
    if clash is not None:
        return GridCheck("invalid", f"the givens clash: {clash}", grid, conflicting_cells(grid))
    count, solution = solutions(grid, 2, deadline=deadline)
    if count == 0 or solution is None:
        return GridCheck("no-solution", "no grid completes these givens", grid)
    if count > 1:
        return GridCheck("multiple-solutions", "the givens allow more than one solution", grid)
    return GridCheck("unique", None, grid, solution=solution)
