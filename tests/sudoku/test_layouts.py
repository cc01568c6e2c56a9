from __future__ import annotations

import random
from typing import Any

import pytest

from sudokupool.sudoku.canonical import canonical_transform
from sudokupool.sudoku.layouts import layout_key, moves_between
from sudokupool.sudoku.relayout import between, from_transform
from sudokupool.sudoku.transform import Transform, random_transform
from tests.helpers import demo_records

# Three givens on the main diagonal, one a band: a grid whose lines are alike, with symmetries (transposed, and
# the bands, the stacks and the empty lines of each band in any order, it reads the same).
SPARSE = "".join("123"[i // 30] if i in (0, 40, 80) else "." for i in range(81))


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


def test_every_layout_of_a_puzzle_shares_its_key(demo: list[dict[str, Any]]) -> None:
    rng = random.Random(5)
    for record in demo[::40]:
        puzzle = record["puzzle"]
        assert layout_key(record["canonical"]) == layout_key(puzzle)
        for _ in range(5):
            assert layout_key(random_transform(rng).apply(puzzle)) == layout_key(puzzle)
    # Most puzzles of a pool have a key of their own (the demo pool: 2,287 keys for 2,400 puzzles).
    assert len({layout_key(record["puzzle"]) for record in demo}) > 0.9 * len(demo)
    assert layout_key("1" + "." * 80) != layout_key("12" + "." * 79)


def test_the_one_move_between_two_layouts_is_the_canonical_forms_move(demo: list[dict[str, Any]]) -> None:
    rng = random.Random(7)
    for record in demo[::60]:
        puzzle = record["puzzle"]
        asked = random_transform(rng).apply(puzzle)
        moves = moves_between(puzzle, asked, 64)
        assert moves is not None and len(moves) == 1
        (move,) = moves
        assert move.grid(puzzle) == asked
        assert move.grid(record["solution"]) == Transform().apply(move.grid(record["solution"]))
        expected = between(canonical_transform(puzzle)[1], canonical_transform(asked)[1])
        assert (move.cells, move.digits, move.transposes) == (expected.cells, expected.digits, expected.transposes)


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(Transform(transpose=True), id="transposed"),
        pytest.param(Transform(digits=(9, 8, 7, 6, 5, 4, 3, 2, 1)), id="relabelled"),
        pytest.param(Transform(rows=(6, 7, 8, 3, 4, 5, 0, 1, 2)), id="bands-reversed"),
        pytest.param(Transform(True, (2, 1, 0, 5, 4, 3, 8, 7, 6), (3, 5, 4, 0, 1, 2, 8, 6, 7)), id="all-but-digits"),
    ],
)
def test_each_kind_of_transformation_is_found_as_itself(demo: list[dict[str, Any]], transform: Transform) -> None:
    puzzle = demo[11]["puzzle"]
    moves = moves_between(puzzle, transform.apply(puzzle), 64)
    expected = from_transform(transform)
    assert moves is not None
    assert [(m.cells, m.digits, m.transposes) for m in moves] == [
        (expected.cells, expected.digits, expected.transposes)
    ]


def test_grids_that_are_not_layouts_of_one_puzzle_have_no_move(demo: list[dict[str, Any]]) -> None:
    puzzle = demo[3]["puzzle"]
    asked = random_transform(random.Random(9)).apply(puzzle)
    # A digit swapped for another in one cell: the same key, no move.
    cell = next(i for i, ch in enumerate(asked) if ch != ".")
    other = asked[:cell] + ("1" if asked[cell] != "1" else "2") + asked[cell + 1 :]
    assert moves_between(puzzle, other, 64) == []
    # A given moved to another cell of its row.
    empty = next(i for i in range(cell - cell % 9, cell - cell % 9 + 9) if asked[i] == ".")
    moved = list(asked)
    moved[cell], moved[empty] = ".", asked[cell]
    assert moves_between(puzzle, "".join(moved), 64) == []
    assert moves_between(puzzle, demo[4]["puzzle"], 64) == []


def test_a_grid_with_symmetries_has_a_move_for_each_and_lines_alike_are_bounded() -> None:
    moves = moves_between(SPARSE, SPARSE, 10**6)
    assert moves is not None and len(moves) > 1
    assert all(move.grid(SPARSE) == SPARSE for move in moves)
    assert any(move.transposes for move in moves) and any(not move.transposes for move in moves)
    # Its lines are all but alike: many orders to try, more than a lookup allows.
    assert moves_between(SPARSE, SPARSE, 64) is None
