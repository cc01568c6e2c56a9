"""Generate unique-solution puzzles: a random full grid, then clue orbits removed while uniqueness holds.

Removing whole orbits of a symmetry group keeps the clue pattern symmetric. Every orbit is tried once,
in random order, so the result is minimal for that symmetry (no orbit can be removed without losing
uniqueness). Everything is drawn from one ``random.Random`` seeded by the caller, so a seed always
gives the same puzzle.

Steered toward a level (``generate(seed, symmetry, level)``, what ``build --difficulty`` asks for), an orbit
is removed only while the puzzle stays unique *and no harder than that level*, so the dig ends at a puzzle of
that level or easier instead of running on to whatever level its last removals give; toward Medium, Hard or
Expert it also looks for a removal that leaves Easy, which a plain dig seldom meets. docs/grading.md has what each
level's steering gains.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from sudokupool.sudoku.grader import MAX_SCORE, solve_steps
from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.solver import count_solutions, fills_by_singles, random_full_grid
from sudokupool.sudoku.symmetry import orbits

DEFAULT_SYMMETRY = "rotational-180"
#: The levels a dig can be steered toward (1-4).
STEERED: Final = frozenset({1, 2, 3, 4})
#: Medium, Hard and Expert (docs/grading.md, Building pools): the dig is kept Easy down to ``SNAPSHOT`` clues,
#: then from there, at most ``TRIES`` times over (each time in a new order), kept Easy down to ``SCAN_FROM``
#: clues before it looks for a removal that leaves Easy (:func:`_leave_easy`) and digs on under the level's
#: ceiling (Expert has none), until a dig ends at the level.
SNAPSHOT: Final = {2: 40, 3: 44, 4: 40}
SCAN_FROM: Final = {2: 34, 3: 36, 4: 34}
TRIES: Final = {2: 4, 3: 4, 4: 4}


@dataclass(frozen=True, slots=True)
class Generated:
    """A generated puzzle, its unique solution and the seed that reproduces it."""

    puzzle: str
    solution: str
    seed: int


def generate(seed: int, symmetry: str = DEFAULT_SYMMETRY, level: int | None = None) -> Generated:
    """The puzzle for ``seed`` with a clue pattern symmetric under ``symmetry`` (a name from SYMMETRIES);
    with a ``level`` (1-4), steered toward that level (:func:`_steered`)."""
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
    if fills_by_singles(puzzle):
        return level > 1 or 14 * puzzle.count(EMPTY) <= MAX_SCORE[1] or solve_steps(puzzle, solution, 1) is not None
    return _past_singles_at_most(puzzle, solution, level)


def _past_singles_at_most(puzzle: str, solution: str, level: int) -> bool:
    """:func:`at_most` for a puzzle that singles do not fill."""
    if level == 1 or count_solutions(puzzle, 2) != 1:
        return False
    return level == 4 or solve_steps(puzzle, solution, level) is not None


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


def _leave_easy(cells: list[str], solution: str, groups: list[tuple[int, ...]], level: int) -> list[tuple[int, ...]]:
    """Remove orbits of ``groups`` from ``cells`` (an Easy puzzle) until one removal leaves Easy for a unique
    puzzle no harder than ``level``; the orbits still to try. Each round tries every orbit left: the first that
    leaves Easy that way is removed and the search ends; when none does, the first that keeps the puzzle Easy
    is removed and the next round tries the others that kept it Easy (those that broke uniqueness or went past
    the level only do so the more as clues go).

    A plain dig leaves Easy only when its random order happens to try such an orbit while one exists: seven
    digs in ten end Easy, and most of the rest jump past Medium."""
    while groups:
        easy: list[tuple[int, ...]] = []
        for index, group in enumerate(groups):
            for cell in group:
                cells[cell] = EMPTY
            puzzle = "".join(cells)
            if fills_by_singles(puzzle):
                easy.append(group)
            elif _past_singles_at_most(puzzle, solution, level):
                return easy + groups[index + 1 :]
            for cell in group:
                cells[cell] = solution[cell]
        if not easy:
            return []
        for cell in easy[0]:
            cells[cell] = EMPTY
        groups = easy[1:]
    return []


def _steered(rng: random.Random, solution: str, order: list[tuple[int, ...]], level: int) -> str:
    """The dig of the random ``order`` steered toward ``level``: Easy, no removal that leaves Easy; Medium, Hard
    and Expert, a search for one (:data:`SNAPSHOT`), then no removal past the level (Expert: none)."""
    cells = list(solution)
    if level == 1:
        _dig(cells, solution, order, 1)
        return "".join(cells)
    rest = order[_dig(cells, solution, order, 1, SNAPSHOT[level]) :]
    snapshot = cells
    for attempt in range(TRIES[level]):
        if attempt:
            rng.shuffle(rest)
        cells = list(snapshot)
        pending = rest[_dig(cells, solution, rest, 1, SCAN_FROM[level]) :]
        _dig(cells, solution, _leave_easy(cells, solution, pending, level), level)
        puzzle = "".join(cells)
        if not at_most(puzzle, solution, level - 1):
            break
    return puzzle
