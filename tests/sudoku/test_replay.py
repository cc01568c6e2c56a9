from __future__ import annotations

import copy

import pytest

from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.replay import replay

# A Medium puzzle (Naked Pair) whose path mixes placements and eliminations.
PUZZLE = "......6...928....3...2...7.528.....4..7...9..3.....561.5...6...7....125...1......"
SOLUTION = "873194625692857413415263879528619734167435982349728561254386197736941258981572346"


@pytest.fixture(scope="module")
def path() -> list[dict[str, object]]:
    g = grade(PUZZLE)
    assert g.solved
    return g.solve_path


def first(path: list[dict[str, object]], with_placements: bool) -> int:
    return next(i for i, s in enumerate(path) if bool(s["placements"]) == with_placements)


def test_the_graders_path_replays_cleanly(path: list[dict[str, object]]) -> None:
    assert replay(PUZZLE, SOLUTION, path) == []


def test_wrong_digit_is_caught(path: list[dict[str, object]]) -> None:
    bad = copy.deepcopy(path)
    i = first(bad, True)
    placement = bad[i]["placements"][0]  # type: ignore[index]
    cell = placement["cell"]
    placement["digit"] = placement["digit"] % 9 + 1
    errors = replay(PUZZLE, SOLUTION, bad)
    assert any(f"in {cell}, but the solution has" in e for e in errors)


def test_eliminating_a_solution_digit_is_caught(path: list[dict[str, object]]) -> None:
    bad = copy.deepcopy(path)
    i = first(bad, False)
    # r1c1 is empty at the start and its solution digit is 8.
    bad[i]["eliminations"].append({"cell": "r1c1", "digit": 8})  # type: ignore[attr-defined]
    errors = replay(PUZZLE, SOLUTION, bad)
    assert any("eliminates 8 from r1c1, the solution's digit there" in e for e in errors)


def test_no_op_step_is_caught(path: list[dict[str, object]]) -> None:
    bad = copy.deepcopy(path)
    i = first(bad, False)
    bad.insert(i + 1, copy.deepcopy(bad[i]))  # the same eliminations again remove nothing
    errors = replay(PUZZLE, SOLUTION, bad)
    assert any(e.startswith(f"step {i + 2} ") and "changes nothing" in e for e in errors)


def test_missing_placement_is_caught(path: list[dict[str, object]]) -> None:
    bad = copy.deepcopy(path)
    del bad[-1]
    assert replay(PUZZLE, SOLUTION, bad) == ["the path leaves 1 cell(s) empty"]


def test_placing_a_cell_twice_is_caught(path: list[dict[str, object]]) -> None:
    bad = copy.deepcopy(path)
    bad.append(copy.deepcopy(bad[-1]))
    errors = replay(PUZZLE, SOLUTION, bad)
    assert any("which already holds" in e for e in errors)


def test_placing_a_given_is_caught(path: list[dict[str, object]]) -> None:
    bad = copy.deepcopy(path)
    bad[0]["placements"] = [{"cell": "r1c7", "digit": 6}]  # r1c7 is a given
    errors = replay(PUZZLE, SOLUTION, bad)
    assert any("r1c7, which already holds 6" in e for e in errors)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        pytest.param(lambda s: s.pop("explanation"), "missing field(s) explanation", id="missing-field"),
        pytest.param(lambda s: s.update(cells=["r0c1"]), "cells must be a list of cell names", id="bad-cell"),
        pytest.param(lambda s: s.update(digits=[10]), "digits must be a list of integers 1-9", id="bad-digit"),
        pytest.param(lambda s: s.update(houses=["row 10"]), "houses must be a list like", id="bad-house"),
        pytest.param(lambda s: s.update(score="4"), "score must be a non-negative integer", id="bad-score"),
        pytest.param(lambda s: s.update(technique=""), "technique must be a non-empty string", id="no-technique"),
        pytest.param(
            lambda s: s.update(placements=[{"cell": "r1c10", "digit": 1}]), "malformed placements entry", id="bad-move"
        ),
        pytest.param(
            lambda s: s.update(placements=[{"cell": "r1c1", "digit": True}]), "malformed placements entry", id="bool"
        ),
    ],
)
def test_malformed_steps_are_reported(path: list[dict[str, object]], mutate: object, message: str) -> None:
    bad = copy.deepcopy(path)
    mutate(bad[0])  # type: ignore[operator]
    errors = replay(PUZZLE, SOLUTION, bad)
    assert any(message in e and e.startswith("step 1 ") for e in errors)


def test_bad_puzzle_or_solution() -> None:
    assert replay("x" * 81, SOLUTION, []) != []
    assert replay(PUZZLE, "1" * 80, []) == ["solution: must be 81 digits 1-9"]


def test_empty_path_leaves_cells_empty() -> None:
    assert replay(PUZZLE, SOLUTION, []) == [f"the path leaves {PUZZLE.count('.')} cell(s) empty"]


def test_a_true_elimination_its_cells_do_not_prove_is_caught(path: list[dict[str, object]]) -> None:
    # 1 is not r1c1's digit (8), but nothing about r9c9 rules it out.
    claim = {
        "technique": "X-Wing",
        "score": 140,
        "placements": [],
        "eliminations": [{"cell": "r1c1", "digit": 1}],
        "cells": ["r9c9"],
        "houses": [],
        "digits": [1],
        "explanation": "Trust me.",
    }
    errors = replay(PUZZLE, SOLUTION, [claim, *copy.deepcopy(path)])
    assert errors == ["step 1 (X-Wing): its cells do not rule out 1 in r1c1"]
