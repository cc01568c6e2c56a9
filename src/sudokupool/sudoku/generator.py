"""Generate unique-solution puzzles: a random full grid, then clue orbits removed while uniqueness holds.

Removing whole orbits of a symmetry group keeps the clue pattern symmetric. Every orbit is tried once,
in random order, so the result is minimal for that symmetry (no orbit can be removed without losing
uniqueness). Everything is drawn from one ``random.Random`` seeded by the caller, so a seed always
gives the same puzzle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sudokupool.sudoku.solver import count_solutions, random_full_grid
from sudokupool.sudoku.symmetry import orbits

DEFAULT_SYMMETRY = "rotational-180"


@dataclass(frozen=True, slots=True)
class Generated:
    """A generated puzzle, its unique solution and the seed that reproduces it."""

    puzzle: str
    solution: str
    seed: int


def generate(seed: int, symmetry: str = DEFAULT_SYMMETRY) -> Generated:
    """The puzzle for ``seed`` with a clue pattern symmetric under ``symmetry`` (a name from SYMMETRIES)."""
    rng = random.Random(seed)
    solution = random_full_grid(rng)
    cells = list(solution)
    order = list(orbits(symmetry))
    rng.shuffle(order)
    for group in order:
        for cell in group:
            cells[cell] = "."
        if count_solutions("".join(cells), 2) != 1:
            for cell in group:
                cells[cell] = solution[cell]
    return Generated("".join(cells), solution, seed)
