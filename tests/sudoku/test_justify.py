from __future__ import annotations

from sudokupool.sudoku.candidates import ALL, BIT, Candidates
from sudokupool.sudoku.grid import HOUSES
from sudokupool.sudoku.justify import unjustified


def idx(name: str) -> int:
    return (int(name[1]) - 1) * 9 + int(name[3]) - 1


def blank() -> Candidates:
    return Candidates([0] * 81, [ALL] * 81)


def only(cg: Candidates, digit: int, house: int, names: list[str]) -> None:
    keep = {idx(n) for n in names}
    for c in HOUSES[house]:
        if c not in keep:
            cg.cands[c] &= ~BIT[digit]


def step(technique: str, cells: list[str], eliminations: list[tuple[str, int]]) -> dict[str, object]:
    return {
        "technique": technique,
        "score": 0,
        "placements": [],
        "eliminations": [{"cell": c, "digit": d} for c, d in eliminations],
        "cells": cells,
        "houses": [],
        "digits": [],
        "explanation": "x",
    }


def x_wing_grid() -> Candidates:
    cg = blank()
    only(cg, 4, 1, ["r2c3", "r2c8"])
    only(cg, 4, 5, ["r6c3", "r6c8"])
    return cg


def test_an_x_wing_is_justified_by_its_four_corners() -> None:
    s = step("X-Wing", ["r2c3", "r2c8", "r6c3", "r6c8"], [("r1c3", 4), ("r9c8", 4)])
    assert unjustified(x_wing_grid(), s) == []


def test_the_same_claim_from_two_corners_is_not() -> None:
    s = step("X-Wing", ["r2c3", "r2c8"], [("r1c3", 4), ("r9c8", 4)])
    assert unjustified(x_wing_grid(), s) == [
        "its cells do not rule out 4 in r1c3",
        "its cells do not rule out 4 in r9c8",
    ]


def ur_grid() -> Candidates:
    cg = blank()
    for name in ("r1c1", "r1c4", "r2c1"):
        cg.cands[idx(name)] = BIT[1] | BIT[2]
    cg.cands[idx("r2c4")] = BIT[1] | BIT[2] | BIT[3]
    return cg


def test_a_unique_rectangle_counts_on_uniqueness() -> None:
    cells = ["r1c1", "r1c4", "r2c1", "r2c4"]
    claim = [("r2c4", 1), ("r2c4", 2)]
    assert unjustified(ur_grid(), step("Uniqueness Test 1", cells, claim)) == []
    # Without the uniqueness argument nothing rules out 1 or 2 there.
    assert len(unjustified(ur_grid(), step("XY-Chain", cells, claim))) == 2


def test_brute_force_needs_no_pattern() -> None:
    s = step("Brute Force", [], [])
    s["placements"] = [{"cell": "r1c1", "digit": 5}]
    assert unjustified(blank(), s) == []


def test_a_placement_needs_its_cells_to_force_it() -> None:
    cg = blank()
    only(cg, 7, 2, ["r3c4"])
    s = step("Hidden Single", ["r3c4"], [])
    s["placements"] = [{"cell": "r3c4", "digit": 7}]
    assert unjustified(cg, s) == []
    s["placements"] = [{"cell": "r3c5", "digit": 7}]
    s["cells"] = ["r3c5"]
    assert unjustified(cg, s) == []  # r3c5 lost 7 already: replay reports that, not this check
    s["placements"] = [{"cell": "r4c5", "digit": 7}]
    s["cells"] = ["r4c5"]
    assert unjustified(cg, s) == ["its cells do not force 7 into r4c5"]
