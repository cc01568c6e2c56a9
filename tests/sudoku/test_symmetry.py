from __future__ import annotations

import random

import pytest

from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.symmetry import SYMMETRIES, orbit, orbits, symmetry_class


def pattern(cells: set[int]) -> str:
    return "".join("1" if i in cells else EMPTY for i in range(81))


def cell(r: int, c: int) -> int:
    """Cell index for 1-based row and column."""
    return (r - 1) * 9 + (c - 1)


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        pytest.param({cell(1, 2)}, "none", id="none"),
        pytest.param({cell(1, 2), cell(9, 8)}, "rotational-180", id="rotational-180"),
        pytest.param({cell(1, 2), cell(2, 9), cell(9, 8), cell(8, 1)}, "rotational-90", id="rotational-90"),
        pytest.param({cell(1, 2), cell(9, 2)}, "mirror-horizontal", id="mirror-horizontal"),
        pytest.param({cell(1, 2), cell(1, 8)}, "mirror-vertical", id="mirror-vertical"),
        pytest.param({cell(1, 2), cell(1, 8), cell(9, 2), cell(9, 8)}, "mirror-both", id="mirror-both"),
        pytest.param({cell(1, 2), cell(2, 1)}, "diagonal-main", id="diagonal-main"),
        pytest.param({cell(1, 2), cell(8, 9)}, "diagonal-anti", id="diagonal-anti"),
        pytest.param({cell(1, 2), cell(2, 1), cell(8, 9), cell(9, 8)}, "diagonal-both", id="diagonal-both"),
        pytest.param({cell(5, 5)}, "full", id="full-centre"),
        pytest.param(set(), "full", id="full-empty"),
        pytest.param({cell(1, 1), cell(1, 9), cell(9, 1), cell(9, 9)}, "full", id="full-corners"),
    ],
)
def test_symmetry_class(cells: set[int], expected: str) -> None:
    assert symmetry_class(pattern(cells)) == expected


def test_ten_names() -> None:
    assert len(SYMMETRIES) == 10
    assert SYMMETRIES[0] == "none"
    assert "rotational-180" in SYMMETRIES


@pytest.mark.parametrize("name", SYMMETRIES)
def test_orbit_union_has_at_least_that_symmetry(name: str) -> None:
    # A pattern built from random orbits of a group is fixed by that group, so its class is that group
    # or a larger one; with many random orbits the class is almost always exactly the group.
    rng = random.Random(name)
    groups = orbits(name)
    assert sorted(c for o in groups for c in o) == list(range(81))
    hits = 0
    for _ in range(20):
        chosen = {c for o in rng.sample(groups, len(groups) // 2) for c in o}
        hits += symmetry_class(pattern(chosen)) == name
    assert hits >= 15


@pytest.mark.parametrize(
    ("name", "start", "expected"),
    [
        pytest.param("none", cell(1, 2), (cell(1, 2),), id="none"),
        pytest.param("rotational-180", cell(1, 2), (cell(1, 2), cell(9, 8)), id="rot180"),
        pytest.param("rotational-180", cell(5, 5), (cell(5, 5),), id="rot180-centre"),
        pytest.param("rotational-90", cell(1, 2), (cell(1, 2), cell(2, 9), cell(8, 1), cell(9, 8)), id="rot90"),
        pytest.param("mirror-horizontal", cell(1, 2), (cell(1, 2), cell(9, 2)), id="mirror-h"),
        pytest.param("diagonal-main", cell(3, 3), (cell(3, 3),), id="diag-main-on-axis"),
        pytest.param(
            "full",
            cell(1, 2),
            tuple(
                sorted({cell(1, 2), cell(2, 1), cell(1, 8), cell(8, 1), cell(2, 9), cell(9, 2), cell(8, 9), cell(9, 8)})
            ),
            id="full",
        ),
    ],
)
def test_orbit(name: str, start: int, expected: tuple[int, ...]) -> None:
    assert orbit(start, name) == expected


def test_orbit_rejects_unknown_name() -> None:
    with pytest.raises(KeyError):
        orbit(0, "sideways")


def reference_class(puzzle: str) -> str:
    """The class from its definition: of the groups whose every orbit is all givens or all empty cells (the groups
    that fix the pattern), the largest (the fewest orbits) is the group of every symmetry that fixes it."""
    fixing = [
        name for name in SYMMETRIES if all(len({puzzle[c] == EMPTY for c in group}) == 1 for group in orbits(name))
    ]
    return min(fixing, key=lambda name: len(orbits(name)))


@pytest.mark.parametrize("name", SYMMETRIES)
def test_symmetry_class_follows_the_definition(name: str) -> None:
    # Patterns made of whole orbits of each group, digits differing inside an orbit, and some cells changed after, so
    # that each class and its neighbours come up; and any character but a dot counts as a given.
    rng = random.Random(f"definition {name}")
    seen = set()
    for _ in range(300):
        cells = ["."] * 81
        for group in orbits(name):
            if rng.random() < 0.4:
                for c in group:
                    cells[c] = rng.choice("123456789")
        for _ in range(rng.choice((0, 0, 1, 2))):
            cells[rng.randrange(81)] = rng.choice(".123456789x0")
        puzzle = "".join(cells)
        assert symmetry_class(puzzle) == reference_class(puzzle), puzzle
        seen.add(symmetry_class(puzzle))
    assert name in seen
