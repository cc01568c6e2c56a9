from __future__ import annotations

import pytest

from sudokupool.sudoku.check import check_grid, conflicting_cells
from sudokupool.sudoku.grid import EMPTY

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLVED = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def test_a_unique_puzzle_comes_with_its_solution() -> None:
    checked = check_grid(PUZZLE.replace(".", "0"))
    assert (checked.verdict, checked.reason, checked.grid, checked.solution) == ("unique", None, PUZZLE, SOLVED)


def test_a_clash_names_every_cell_in_it() -> None:
    # A 5 in r1c3 repeats r1c1's 5 in row 1 and box 1; a 9 in r9c1 repeats r9c9's 9 in row 9.
    grid = list(PUZZLE)
    grid[2] = "5"
    grid[72] = "9"
    checked = check_grid("".join(grid))
    assert checked.verdict == "invalid"
    assert checked.reason == "the givens clash: digit 5 appears twice in row 1"
    assert checked.conflicts == (0, 2, 72, 80)
    assert conflicting_cells(PUZZLE) == ()


@pytest.mark.parametrize(
    ("grid", "verdict", "reason"),
    [
        pytest.param(EMPTY * 81, "multiple-solutions", "the givens allow more than one solution", id="empty"),
        pytest.param(PUZZLE[:-2] + "..", "multiple-solutions", "the givens allow more than one solution", id="loose"),
        # r1c9 can hold only 9 by its row, and r2c9's 9 takes that away: no clash, no solution.
        pytest.param(
            "12345678." + EMPTY * 8 + "9" + EMPTY * 63, "no-solution", "no grid completes these givens", id="dead"
        ),
        pytest.param(
            "x" * 81, "invalid", "a grid holds only the digits 1-9 and '.' or '0' for empty cells", id="chars"
        ),
        pytest.param("1" * 80, "invalid", "a grid has 81 cells, got 80", id="short"),
    ],
)
def test_verdicts(grid: str, verdict: str, reason: str) -> None:
    checked = check_grid(grid)
    assert (checked.verdict, checked.reason) == (verdict, reason)
    assert checked.solution is None
