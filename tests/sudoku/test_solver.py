from __future__ import annotations

import itertools
import random
import time

import pytest

from sudokupool.sudoku.grid import DIGITS, EMPTY, PEERS, agrees, is_complete_solution
from sudokupool.sudoku.solver import (
    TimeLimitExceeded,
    _Singles,
    count_solutions,
    fills_by_singles,
    random_full_grid,
    solutions,
    solve,
    solved_by_singles,
)

SOLVED = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
# A classic puzzle (the Wikipedia example) whose solution is SOLVED.
PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def brute_force_count(grid: str) -> int:
    """Count solutions by trying every digit in every empty cell, with no pruning beyond peers."""
    cells = list(grid)
    empties = [i for i, ch in enumerate(cells) if ch == EMPTY]

    def rec(k: int) -> int:
        if k == len(empties):
            return 1
        cell = empties[k]
        total = 0
        for digit in DIGITS:
            if all(cells[p] != digit for p in PEERS[cell]):
                cells[cell] = digit
                total += rec(k + 1)
                cells[cell] = EMPTY
        return total

    return rec(0)


def blank(grid: str, cells: list[int]) -> str:
    out = list(grid)
    for cell in cells:
        out[cell] = EMPTY
    return "".join(out)


def test_solves_classic_puzzle() -> None:
    assert solve(PUZZLE) == SOLVED
    assert count_solutions(PUZZLE) == 1


def test_full_grid_has_one_solution() -> None:
    assert count_solutions(SOLVED) == 1
    assert solve(SOLVED) == SOLVED


@pytest.mark.parametrize("seed", range(20))
def test_count_matches_brute_force_on_small_cases(seed: int) -> None:
    rng = random.Random(seed)
    grid = random_full_grid(rng)
    puzzle = blank(grid, rng.sample(range(81), 12))
    expected = brute_force_count(puzzle)
    assert count_solutions(puzzle, limit=1000) == expected
    assert count_solutions(puzzle) == min(expected, 2)


def test_deadly_pattern_has_two_solutions() -> None:
    # r1c1, r1c2, r4c1, r4c2 hold the same two digits crosswise in SOLVED? Find a swappable rectangle.
    rectangles = []
    for r1, r2 in itertools.combinations(range(9), 2):
        if r1 // 3 == r2 // 3:
            continue
        for c1, c2 in itertools.combinations(range(9), 2):
            if c1 // 3 != c2 // 3:
                continue
            a, b = SOLVED[r1 * 9 + c1], SOLVED[r1 * 9 + c2]
            if SOLVED[r2 * 9 + c1] == b and SOLVED[r2 * 9 + c2] == a:
                rectangles.append([r1 * 9 + c1, r1 * 9 + c2, r2 * 9 + c1, r2 * 9 + c2])
    assert rectangles, "the test grid must contain an unavoidable rectangle"
    puzzle = blank(SOLVED, rectangles[0])
    assert brute_force_count(puzzle) == 2
    assert count_solutions(puzzle, limit=10) == 2
    assert count_solutions(puzzle) == 2
    assert count_solutions(puzzle, limit=1) == 1
    solution = solve(puzzle)
    assert solution is not None
    assert agrees(puzzle, solution)
    assert is_complete_solution(solution)


def test_empty_grid_has_many_solutions() -> None:
    assert count_solutions(EMPTY * 81, limit=5) == 5


@pytest.mark.parametrize(
    "grid",
    [
        pytest.param("11" + EMPTY * 79, id="clash-in-row"),
        pytest.param("1" + EMPTY * 8 + "1" + EMPTY * 71, id="clash-in-column"),
        # r1c1..r1c8 = 1..8 and r2c9 = 9 leave r1c9 with no candidate.
        pytest.param("12345678" + EMPTY * 9 + "9" + EMPTY * 63, id="dead-cell"),
    ],
)
def test_no_solution(grid: str) -> None:
    assert count_solutions(grid) == 0
    assert solve(grid) is None
    assert solutions(grid) == (0, None)


@pytest.mark.parametrize("seed", range(20))
def test_solutions_with_singles_agrees_with_the_plain_search(seed: int) -> None:
    # solutions() fills naked and hidden singles before it branches; the count and, for a unique
    # puzzle, the solution must be the plain search's. Blanking 12 to 60 cells gives unique puzzles,
    # several solutions, and (with one clue changed) none.
    rng = random.Random(seed)
    grid = random_full_grid(rng)
    for blanks in (12, 30, 45, 60):
        puzzle = blank(grid, rng.sample(range(81), blanks))
        count, solution = solutions(puzzle)
        assert count == count_solutions(puzzle)
        assert solutions(puzzle, limit=5)[0] == count_solutions(puzzle, limit=5)
        if count == 1:
            assert solution == grid
        else:
            assert solution is not None and agrees(puzzle, solution) and is_complete_solution(solution)
        cell = next(c for c in range(81) if puzzle[c] != EMPTY)
        changed = puzzle[:cell] + str(int(puzzle[cell]) % 9 + 1) + puzzle[cell + 1 :]
        assert solutions(changed)[0] == count_solutions(changed)


def test_solutions_of_the_classic_and_the_empty_grid() -> None:
    assert solutions(PUZZLE) == (1, SOLVED)
    assert solutions(EMPTY * 81, limit=5)[0] == 5


# Norvig's "hard1": it has several solutions, and a search branching on cells alone spends minutes (88 s here)
# in subtrees without any before it finds two.
HARD1 = ".....6....59.....82....8....45........3........6..3.54...325..6.................."


def test_a_grid_that_sinks_a_search_by_cells_is_settled_in_a_few_branches() -> None:
    search = _Singles(2)
    state = search.load(HARD1)
    assert state is not None
    search.count(state)
    assert search.found == 2
    assert search.nodes < 100
    count, solution = solutions(HARD1)
    assert count == 2
    assert solution is not None and agrees(HARD1, solution) and is_complete_solution(solution)


def test_a_search_past_its_deadline_stops() -> None:
    with pytest.raises(TimeLimitExceeded):
        solutions(EMPTY * 81, limit=10_000, deadline=time.monotonic())
    assert solutions(PUZZLE, deadline=time.monotonic() + 3600) == (1, SOLVED)


def test_random_full_grid_is_valid_and_deterministic() -> None:
    grids = [random_full_grid(random.Random(seed)) for seed in range(10)]
    assert all(is_complete_solution(g) for g in grids)
    assert len(set(grids)) == 10
    assert random_full_grid(random.Random(7)) == grids[7]


def test_fills_by_singles_agrees_with_solved_by_singles_on_grids_with_a_solution() -> None:
    rng = random.Random(8)
    filled = 0
    for _ in range(150):
        solution = random_full_grid(rng)
        kept = set(rng.sample(range(81), rng.randint(20, 50)))
        grid = "".join(ch if cell in kept else "." for cell, ch in enumerate(solution))
        assert fills_by_singles(grid) == solved_by_singles(grid), grid
        filled += solved_by_singles(grid)
    assert 20 < filled < 130  # both answers are well represented
