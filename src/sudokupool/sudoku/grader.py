"""The human-style grader: solve step by step with the easiest technique that applies.

The score is the sum of HoDoKu's per-step scores; the difficulty comes from the hardest
technique used; ``tier`` and ``stars`` are bands of the score (docs/grading.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.grid import is_complete_solution, parse_grid
from sudokupool.sudoku.techniques import ADVANCED, SCORES, Step
from sudokupool.sudoku.techniques.singles import full_house, hidden_single, naked_single

DIFFICULTIES: Final = ("Easy", "Medium", "Hard", "Expert")

# The difficulty level (1-4) each technique implies.
LEVEL: Final[dict[str, int]] = {
    "Full House": 1,
    "Naked Single": 1,
    "Hidden Single": 1,
    "Locked Candidates Type 1 (Pointing)": 2,
    "Locked Candidates Type 2 (Claiming)": 2,
    "Naked Pair": 2,
    "Naked Triple": 2,
    "Hidden Pair": 2,
    "Hidden Triple": 2,
    "Naked Quadruple": 3,
    "Hidden Quadruple": 3,
    "X-Wing": 3,
    "Swordfish": 3,
    "Jellyfish": 3,
    "Skyscraper": 3,
    "2-String Kite": 3,
    "Turbot Fish": 3,
    "W-Wing": 3,
    "XY-Wing": 3,
    "XYZ-Wing": 3,
    "Simple Colors": 3,
    "X-Chain": 4,
    "XY-Chain": 4,
}
assert LEVEL.keys() == SCORES.keys()

# (lowest score, tier name) and (lowest score, stars); see docs/grading.md.
TIERS: Final = (
    (0, "Warm-up"),
    (250, "Gentle"),
    (400, "Moderate"),
    (600, "Tricky"),
    (900, "Tough"),
    (1300, "Fiendish"),
    (2000, "Diabolical"),
)
STARS: Final = ((0, 1), (400, 2), (600, 3), (900, 4), (1300, 5))


@dataclass(frozen=True)
class Grade:
    solved: bool  # the grader solved the puzzle completely
    difficulty: str | None  # "Easy" | "Medium" | "Hard" | "Expert"
    difficulty_level: int | None  # 1..4
    score: int
    tier: str | None
    stars: int | None
    hardest_technique: str | None
    techniques: list[str]  # distinct names in order of first use
    solve_path: list[dict[str, object]]


def tier_of(score: int) -> str:
    return [name for low, name in TIERS if score >= low][-1]


def stars_of(score: int) -> int:
    return [stars for low, stars in STARS if score >= low][-1]


def solve_steps(puzzle: str) -> tuple[list[Step], bool]:
    """The steps the grader takes on ``puzzle`` and whether they solve it completely."""
    cg = Candidates.from_puzzle(parse_grid(puzzle))
    steps: list[Step] = []
    empty = cg.values.count(0)
    while empty:
        step = full_house(cg) or naked_single(cg) or hidden_single(cg)
        if step is None:
            if cg.is_broken():
                return steps, False
            for finder in ADVANCED:
                step = finder(cg)
                if step is not None:
                    break
            else:
                return steps, False
        for cell, digit in step.placements:
            cg.place(cell, digit)
            empty -= 1
        for cell, digit in step.eliminations:
            cg.eliminate(cell, digit)
        steps.append(step)
    return steps, is_complete_solution(cg.grid())


def grade(puzzle: str) -> Grade:
    """Grade ``puzzle`` by solving it like a human would, easiest technique first.

    ``solved`` is False when the techniques run out before the grid is full (the puzzle then
    carries no difficulty, tier or stars). Raises :class:`~sudokupool.sudoku.grid.GridError` for a
    malformed grid or clashing givens.
    """
    steps, solved = solve_steps(puzzle)
    techniques: list[str] = []
    for step in steps:
        if step.technique not in techniques:
            techniques.append(step.technique)
    score = sum(step.score for step in steps)
    path = [step.to_dict() for step in steps]
    if not solved:
        return Grade(False, None, None, score, None, None, None, techniques, path)
    hardest = max(techniques, key=lambda t: SCORES[t]) if techniques else None
    level = max((LEVEL[t] for t in techniques), default=1)
    return Grade(
        solved=True,
        difficulty=DIFFICULTIES[level - 1],
        difficulty_level=level,
        score=score,
        tier=tier_of(score),
        stars=stars_of(score),
        hardest_technique=hardest,
        techniques=techniques,
        solve_path=path,
    )
