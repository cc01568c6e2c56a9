"""Generate unique-solution puzzles: a random full grid, then clue orbits removed while uniqueness holds.

Removing whole orbits of a symmetry group keeps the clue pattern symmetric. Every orbit is tried once,
in random order, so the result is minimal for that symmetry (no orbit can be removed without losing
uniqueness). Everything is drawn from one ``random.Random`` seeded by the caller, so a seed always
gives the same puzzle.

Steered toward a level (``generate(seed, symmetry, level)``, what ``build --difficulty`` asks for), an orbit
is removed only while the puzzle stays unique *and no harder than that level*, so the dig ends at a puzzle of
that level or easier instead of running on to whatever level its last removals give; docs/grading.md has
what each level's steering is and what it gains.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from sudokupool.sudoku.grader import MAX_SCORE, solve_steps
from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.solver import count_solutions, random_full_grid, solved_by_singles
from sudokupool.sudoku.symmetry import orbits

DEFAULT_SYMMETRY = "rotational-180"
#: The levels a dig can be steered toward. Expert has no ceiling to dig under, and no removal order measured
#: here made Expert puzzles more often than the plain dig does, so it is generated plainly.
STEERED: Final = frozenset({1, 2, 3})
#: Medium: a dig that ends Easy digs its last clues again, in a new order, from where it first had this many
#: clues, at most ``TRIES[2]`` times in all (Medium needs a removal that leaves Easy; most orders have none).
SNAPSHOT_CLUES: Final = 40
TRIES: Final = {1: 1, 2: 6, 3: 1}


@dataclass(frozen=True, slots=True)
class Generated:
    """A generated puzzle, its unique solution and the seed that reproduces it."""

    puzzle: str
    solution: str
    seed: int


def generate(seed: int, symmetry: str = DEFAULT_SYMMETRY, level: int | None = None) -> Generated:
    """The puzzle for ``seed`` with a clue pattern symmetric under ``symmetry`` (a name from SYMMETRIES);
    with ``level`` in :data:`STEERED`, dug no harder than that level (:func:`_steered`)."""
    rng = random.Random(seed)
    solution = random_full_grid(rng)
    order = list(orbits(symmetry))
    rng.shuffle(order)
    if level in STEERED:
        return Generated(_steered(rng, solution, order, level), solution, seed)
    cells = list(solution)
    for group in order:
        for cell in group:
            cells[cell] = "."
        if count_solutions("".join(cells), 2) != 1:
            for cell in group:
                cells[cell] = solution[cell]
    return Generated("".join(cells), solution, seed)


def at_most(puzzle: str, solution: str, level: int) -> bool:
    """True when ``puzzle`` has one solution (``solution``) and the grader finds it of ``level`` or easier.

    Singles filling the grid prove it unique, and make it Easy (Medium when their scores pass Easy's
    maximum); otherwise it must be unique first, since a technique of Hard and up may assume so."""
    if solved_by_singles(puzzle):
        return level > 1 or 14 * puzzle.count(EMPTY) <= MAX_SCORE[1] or solve_steps(puzzle, solution, 1) is not None
    return level > 1 and count_solutions(puzzle, 2) == 1 and solve_steps(puzzle, solution, level) is not None


def _dig(cells: list[str], solution: str, groups: list[tuple[int, ...]], level: int, stop: int = 0) -> int:
    """Remove each of ``groups`` in turn from ``cells`` while :func:`at_most` ``level`` holds, until ``cells``
    has ``stop`` clues or fewer; the index of the first group not tried."""
    for index, group in enumerate(groups):
        if 81 - cells.count(EMPTY) <= stop:
            return index
        for cell in group:
            cells[cell] = EMPTY
        if not at_most("".join(cells), solution, level):
            for cell in group:
                cells[cell] = solution[cell]
    return len(groups)


def _steered(rng: random.Random, solution: str, order: list[tuple[int, ...]], level: int) -> str:
    """The dig under a ceiling of ``level``, from the random ``order`` (Hard: its orbits re-ordered by the
    digits they hold, in a random order of the digits, which leaves Easy more often)."""
    if level == 3:
        digits = rng.sample("123456789", 9)
        rank = {digit: digits.index(digit) for digit in digits}
        noise = {group: rng.random() * 3 for group in order}
        order.sort(key=lambda group: min(rank[solution[cell]] for cell in group) + noise[group])
    cells = list(solution)
    first = _dig(cells, solution, order, level, SNAPSHOT_CLUES) if TRIES[level] > 1 else 0
    snapshot, rest = list(cells), order[first:]
    for attempt in range(TRIES[level]):
        if attempt:
            cells = list(snapshot)
            rng.shuffle(rest)
        _dig(cells, solution, rest, level)
        puzzle = "".join(cells)
        if level == 1 or not at_most(puzzle, solution, level - 1):
            break
    return puzzle
