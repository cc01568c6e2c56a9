from __future__ import annotations

import random

import pytest

from sudokupool.sudoku.grid import EMPTY, is_complete_solution
from sudokupool.sudoku.transform import Transform, random_transform, relabel_in_order

SOLVED = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def test_identity() -> None:
    assert Transform().apply(PUZZLE) == PUZZLE


def test_transpose() -> None:
    out = Transform(transpose=True).apply(PUZZLE)
    assert all(out[c * 9 + r] == PUZZLE[r * 9 + c] for r in range(9) for c in range(9))


def test_row_and_column_order() -> None:
    t = Transform(rows=(3, 4, 5, 0, 1, 2, 6, 7, 8), cols=(2, 1, 0, 3, 4, 5, 6, 7, 8))
    out = t.apply(PUZZLE)
    assert out[0:9] == PUZZLE[27:36][2::-1] + PUZZLE[30:36]
    assert t.map_cell(27) == 2


def test_digits() -> None:
    t = Transform(digits=(2, 3, 4, 5, 6, 7, 8, 9, 1))
    assert t.apply("123456789" + EMPTY * 72) == "234567891" + EMPTY * 72
    assert t.map_digit(9) == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"rows": (0, 1, 3, 2, 4, 5, 6, 7, 8)}, id="row-leaves-band"),
        pytest.param({"cols": (0, 1, 2, 3, 4, 5, 6, 7, 7)}, id="not-a-permutation"),
        pytest.param({"digits": (1, 1, 3, 4, 5, 6, 7, 8, 9)}, id="bad-digits"),
    ],
)
def test_rejects_invalid(kwargs: dict[str, tuple[int, ...]]) -> None:
    with pytest.raises(ValueError):
        Transform(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(30))
def test_random_transform_keeps_validity_and_maps_cells(seed: int) -> None:
    t = random_transform(random.Random(seed))
    out = t.apply(SOLVED)
    assert is_complete_solution(out)
    for cell in range(81):
        assert out[t.map_cell(cell)] == str(t.map_digit(int(SOLVED[cell])))
    assert sorted(t.map_cell(c) for c in range(81)) == list(range(81))


def test_relabel_in_order() -> None:
    assert relabel_in_order("..7.3.7" + EMPTY * 74) == "..1.2.1" + EMPTY * 74
