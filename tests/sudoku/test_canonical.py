from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sudokupool.sudoku.canonical import canonical_form, canonical_transform, canonical_transform_within, invariants
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.ids import canonical_id
from sudokupool.sudoku.solver import random_full_grid
from sudokupool.sudoku.transform import random_transform, relabel_in_order
from tests.helpers import demo_records
from tests.sudoku import minlex_reference

# Published puzzle -> minlex pairs in the same convention as ours (empty cells sort first, digits
# relabelled in order of first appearance, transposition and band/stack/row/column permutations).
VECTORS = [
    # David Clamage, SudokuClassicMinLex, README.md and package/example.py
    # (https://github.com/dclamage/SudokuClassicMinLex): input and the documented minlexed output.
    pytest.param(
        "1..456...4......2...912...6.1...5.....5..729.8..6....43.....9.2....6......82...75",
        "........1..2..3.4..5.16.2.....7...84..96.17..7..4.9.....8.9..3..3.....9..94..76..",
        id="clamage-readme",
    ),
    # Red Ed's minimum and maximum min-lex solution grids (forum.enjoysudoku.com, "Canonical Form"
    # thread, 28 January 2007): each is already in minlex form, so it is its own canonical form.
    pytest.param(
        "123456789456789123789123456214365897365897214897214365531642978642978531978531642",
        "123456789456789123789123456214365897365897214897214365531642978642978531978531642",
        id="minimum-minlex-grid",
    ),
    pytest.param(
        "123456789457893612986217354274538196531964827698721435342685971715349268869172543",
        "123456789457893612986217354274538196531964827698721435342685971715349268869172543",
        id="maximum-minlex-grid",
    ),
]


@pytest.mark.parametrize(("puzzle", "expected"), VECTORS)
def test_published_vectors(puzzle: str, expected: str) -> None:
    assert canonical_form(puzzle) == expected


def test_published_vector_after_transform() -> None:
    puzzle, expected = VECTORS[0].values[0], VECTORS[0].values[1]
    moved = random_transform(random.Random(5)).apply(str(puzzle))
    assert canonical_form(moved) == expected


@pytest.mark.parametrize(
    ("puzzle", "expected"),
    [
        pytest.param(EMPTY * 81, EMPTY * 81, id="empty"),
        pytest.param("7" + EMPTY * 80, EMPTY * 80 + "1", id="one-clue"),
        pytest.param("98" + EMPTY * 79, EMPTY * 79 + "12", id="two-clues-same-row"),
        pytest.param("9" + EMPTY * 8 + "8" + EMPTY * 71, EMPTY * 79 + "12", id="two-clues-same-column"),
        # Two clues in different bands and stacks cannot share the last band or stack: the best places
        # are r6c9 (cell 53) and r9c6 (cell 77).
        pytest.param(
            "9" + EMPTY * 39 + "8" + EMPTY * 40, EMPTY * 53 + "1" + EMPTY * 23 + "2" + EMPTY * 3, id="two-clues-apart"
        ),
    ],
)
def test_small_hand_checked_cases(puzzle: str, expected: str) -> None:
    assert canonical_form(puzzle) == expected


@pytest.mark.parametrize("seed", range(8))
def test_no_sampled_transform_is_smaller(seed: int) -> None:
    # The canonical form is the minimum over the group, so no transformation of the puzzle can
    # produce a smaller relabelled string.
    puzzle = generate(seed).puzzle
    form = canonical_form(puzzle)
    rng = random.Random(seed)
    for _ in range(300):
        assert form <= relabel_in_order(random_transform(rng, relabel=False).apply(puzzle))


def test_form_is_a_transform_of_the_puzzle() -> None:
    puzzle = generate(11).puzzle
    form = canonical_form(puzzle)
    assert form.count(EMPTY) == puzzle.count(EMPTY)
    assert form[0] == EMPTY
    assert sorted(set(form) - {EMPTY}) == sorted({str(d) for d in range(1, 1 + len(set(puzzle) - {EMPTY}))})


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), move=st.integers(0, 2**32))
def test_invariant_under_random_transforms(seed: int, move: int) -> None:
    puzzle = generate(seed % 200).puzzle
    moved = random_transform(random.Random(move)).apply(puzzle)
    form = canonical_form(puzzle)
    assert canonical_form(moved) == form
    assert canonical_id(canonical_form(moved)) == canonical_id(form)
    assert canonical_form(form) == form


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    move=st.integers(0, 2**32),
    holes=st.sets(st.integers(0, 80), min_size=1, max_size=64),
)
def test_invariant_on_arbitrary_clue_sets(seed: int, move: int, holes: set[int]) -> None:
    # Not only generated puzzles: any subset of a solution grid, including very sparse or nearly full ones (a
    # full grid, the slowest search there is, has a test of its own rather than being Hypothesis's favourite).
    from sudokupool.sudoku.solver import random_full_grid

    grid = list(random_full_grid(random.Random(seed)))
    for cell in holes:
        grid[cell] = EMPTY
    puzzle = "".join(grid)
    moved = random_transform(random.Random(move)).apply(puzzle)
    form = canonical_form(puzzle)
    assert canonical_form(moved) == form
    assert canonical_form(form) == form


def test_invariant_on_a_full_grid() -> None:
    from sudokupool.sudoku.solver import random_full_grid

    grid = "".join(random_full_grid(random.Random(11)))
    form = canonical_form(grid)
    assert canonical_form(random_transform(random.Random(12)).apply(grid)) == form
    assert canonical_form(form) == form


def test_every_form_of_a_puzzle_shares_its_invariants() -> None:
    rng = random.Random(7)
    for seed in range(5):
        puzzle = generate(seed).puzzle
        assert invariants(canonical_form(puzzle)) == invariants(puzzle)
        for _ in range(5):
            assert invariants(random_transform(rng).apply(puzzle)) == invariants(puzzle)
    # One clue moved to another row, column and box changes them.
    assert invariants("1" + "." * 80) != invariants("12" + "." * 79)


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


def test_every_demo_record_keeps_its_canonical_form_and_id(demo: list[dict[str, Any]]) -> None:
    # The form is the one the records were published with, so every canonical_id stays valid; and the
    # transformation given with it maps the puzzle onto it.
    assert len(demo) >= 2000
    for record in demo:
        form, move = canonical_transform(record["puzzle"])
        assert form == record["canonical"], record["puzzle_id"]
        assert canonical_id(form) == record["canonical_id"]
        assert move.apply(record["puzzle"]) == form


def test_demo_records_in_other_layouts_find_their_canonical_id(demo: list[dict[str, Any]]) -> None:
    rng = random.Random(47)
    for record in demo[::7]:
        moved = random_transform(rng).apply(record["puzzle"])
        form, move = canonical_transform(moved)
        assert canonical_id(form) == record["canonical_id"]
        assert move.apply(moved) == form


def _sparse_grid(seed: int, holes: set[int]) -> str:
    grid = list(random_full_grid(random.Random(seed)))
    for cell in holes:
        grid[cell] = EMPTY
    return "".join(grid)


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    # Nearly full and nearly empty grids, where very many relabellings or column orders tie, take the
    # reference seconds each; the published vectors and the small cases above cover both ends.
    holes=st.sets(st.integers(0, 80), min_size=30, max_size=66),
)
def test_same_form_as_the_reference_on_any_clue_set(seed: int, holes: set[int]) -> None:
    # The reference fixes whole column orders; the engine keeps interchangeable columns as groups. Both
    # are exact, so they agree everywhere, down to the empty and the full grid.
    puzzle = _sparse_grid(seed, holes)
    form, move = canonical_transform(puzzle)
    assert form == minlex_reference.canonical_form(puzzle)
    assert move.apply(puzzle) == form


@pytest.mark.parametrize(
    "puzzle",
    [
        pytest.param(EMPTY * 81, id="empty"),
        pytest.param("1" + EMPTY * 80, id="one-digit"),
        pytest.param(EMPTY * 27 + "123456789" + EMPTY * 45, id="one-full-row"),
    ],
)
def test_transform_is_a_permutation_even_when_digits_are_missing(puzzle: str) -> None:
    form, move = canonical_transform(puzzle)
    assert move.apply(puzzle) == form
    assert sorted(move.digits) == list(range(1, 10))


def test_a_bounded_search_gives_up_on_a_full_grid_and_not_on_a_puzzle(demo: list[dict[str, Any]]) -> None:
    full = VECTORS[1].values[0]
    assert canonical_transform_within(str(full), 500) is None
    record = demo[0]
    found = canonical_transform_within(record["puzzle"], 500)
    assert found is not None
    assert found[0] == record["canonical"]
