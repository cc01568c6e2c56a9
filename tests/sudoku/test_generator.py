from __future__ import annotations

import pytest

from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grid import agrees, is_complete_solution
from sudokupool.sudoku.solver import count_solutions
from sudokupool.sudoku.symmetry import SYMMETRIES, orbits, symmetry_class

# Symmetry classes that contain each group, i.e. the classes a pattern made of its orbits can have.
SUPERGROUPS = {
    "none": set(SYMMETRIES),
    "rotational-180": {"rotational-180", "rotational-90", "mirror-both", "diagonal-both", "full"},
    "rotational-90": {"rotational-90", "full"},
    "mirror-horizontal": {"mirror-horizontal", "mirror-both", "full"},
    "mirror-vertical": {"mirror-vertical", "mirror-both", "full"},
    "mirror-both": {"mirror-both", "full"},
    "diagonal-main": {"diagonal-main", "diagonal-both", "full"},
    "diagonal-anti": {"diagonal-anti", "diagonal-both", "full"},
    "diagonal-both": {"diagonal-both", "full"},
    "full": {"full"},
}


@pytest.mark.parametrize("seed", range(5))
def test_default_is_unique_and_rotational(seed: int) -> None:
    g = generate(seed)
    assert g.seed == seed
    assert count_solutions(g.puzzle) == 1
    assert is_complete_solution(g.solution)
    assert agrees(g.puzzle, g.solution)
    assert symmetry_class(g.puzzle) in SUPERGROUPS["rotational-180"]


def test_deterministic_for_a_seed() -> None:
    assert generate(42) == generate(42)
    assert generate(42).puzzle != generate(43).puzzle


@pytest.mark.parametrize("name", SYMMETRIES)
def test_each_symmetry(name: str) -> None:
    g = generate(1, name)
    assert count_solutions(g.puzzle) == 1
    assert symmetry_class(g.puzzle) in SUPERGROUPS[name]


def test_minimal_for_its_symmetry() -> None:
    # No orbit of givens can be removed without losing uniqueness.
    g = generate(3)
    for group in orbits("rotational-180"):
        if all(g.puzzle[c] != "." for c in group):
            cells = list(g.puzzle)
            for c in group:
                cells[c] = "."
            assert count_solutions("".join(cells)) == 2
