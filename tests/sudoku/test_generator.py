from __future__ import annotations

import pytest

from sudokupool.sudoku.generator import at_most, generate
from sudokupool.sudoku.grader import grade
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


@pytest.mark.parametrize("symmetry", ["rotational-180", "none", "mirror-both"])
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_a_steered_dig_is_unique_symmetric_and_no_harder_than_its_level(symmetry: str, level: int) -> None:
    for seed in range(4):
        g = generate(seed, symmetry, level)
        assert count_solutions(g.puzzle) == 1
        assert agrees(g.puzzle, g.solution)
        assert symmetry_class(g.puzzle) in SUPERGROUPS[symmetry]
        graded = grade(g.puzzle)
        assert graded.solution == g.solution
        assert graded.difficulty_level is not None and graded.difficulty_level <= level
        assert generate(seed, symmetry, level) == g  # the same seed makes the same puzzle


def test_steering_makes_other_puzzles_than_the_plain_dig_and_leaves_it_alone() -> None:
    # Same full grid (the same draws come first), another dig; without a level, the plain dig.
    plain, easy = generate(5), generate(5, level=1)
    assert easy.solution == plain.solution
    assert [generate(seed, level=2).puzzle for seed in range(4)] != [generate(seed).puzzle for seed in range(4)]
    assert generate(5, level=None) == plain
    assert [generate(seed, level=4).puzzle for seed in range(4)] != [generate(seed).puzzle for seed in range(4)]


def test_steering_toward_a_level_past_easy_makes_it_more_often_than_the_plain_dig() -> None:
    # 24 seeds: the plain dig makes about 10 % Medium, 13 % Hard and 10 % Expert; steered, about 70 %, 70 %
    # and 40 %.
    seeds = range(24)
    plain_levels = [grade(generate(seed).puzzle).difficulty_level for seed in seeds]
    for level, at_least in ((2, 12), (3, 12), (4, 6)):
        plain = plain_levels.count(level)
        steered = sum(grade(generate(seed, level=level).puzzle).difficulty_level == level for seed in seeds)
        assert steered >= at_least and steered > plain, (level, plain, steered)


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_at_most_agrees_with_the_grader(level: int) -> None:
    for seed in range(6):
        g = generate(seed)
        graded = grade(g.puzzle)
        assert graded.difficulty_level is not None
        assert at_most(g.puzzle, g.solution, level) == (graded.difficulty_level <= level)
        # A puzzle with two solutions is never "at most" anything.
        blanked = g.puzzle.replace(next(ch for ch in g.puzzle if ch != "."), ".", 2)
        if count_solutions(blanked) > 1:
            assert not at_most(blanked, g.solution, level)
