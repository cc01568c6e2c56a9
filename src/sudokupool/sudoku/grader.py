"""The human-style grader: solve step by step with the easiest technique that applies.

Each step carries HoDoKu's score for its technique. The difficulty follows HoDoKu's rule on their
total; the puzzle's score lets the hardest step dominate, as Sudoku Explainer's rating does
(:func:`score_of`); ``tier`` and ``stars`` are bands of the score (docs/grading.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.check import check_grid
from sudokupool.sudoku.solver import TimeLimitExceeded
from sudokupool.sudoku.technique_table import LEVEL, SCORES
from sudokupool.sudoku.techniques import ADVANCED, Step, memo
from sudokupool.sudoku.techniques.last_resort import brute_force
from sudokupool.sudoku.techniques.singles import full_house, hidden_single, naked_single

# HoDoKu raises a puzzle's level while its score exceeds the level's maximum (EASY 800, MEDIUM 1000,
# HARD 1600; UNFAIR's 1800 leads to EXTREME, which is Expert too).
MAX_SCORE: Final = {1: 800, 2: 1000, 3: 1600}

# (lowest score, stars) and (lowest score, tier name); see docs/grading.md. The star bands were set on the
# scores of the demo pool and of rated public puzzles: each level spreads over two or three star values
# (no value holds more than 80 % of a level), no value holds more than 60 % of the puzzles Sudoku Explainer
# rates 6 or more, and the stars rank with Sudoku Explainer's ratings. The tiers split the bands of 1 and 3
# stars: naked singles only (Warm-up) or not (Gentle); below 1500, a hardest step up to an X-Wing or a
# uniqueness test (Tricky), or above (Tough).
STARS: Final = ((0, 1), (160, 2), (525, 3), (2500, 4), (3130, 5))
TIERS: Final = (
    (0, "Warm-up"),
    (140, "Gentle"),
    (160, "Moderate"),
    (525, "Tricky"),
    (1500, "Tough"),
    (2500, "Fiendish"),
    (3130, "Diabolical"),
)
# The steps that count in the score besides the hardest one: difficulty 200 and up, HoDoKu's Expert
# techniques (Finned Swordfish and harder) and W-Wings. Counting the easier steps too (HoDoKu's whole
# total) ranks worse against Sudoku Explainer's ratings: their number says little about how hard a
# puzzle is once it needs chains (docs/grading.md, Measured).
HARD_STEP: Final = 200
#: How many of the ``ADVANCED`` finders (from the first) can give a step of level 1, 2 or 3: the later ones
#: give only harder steps (Medium ends with Hidden Triple; Hard with Simple Colors, the Expert finders
#: before it included), so a grade that stops past a level need not try them.
REACH: Final = {1: 0, 2: 6, 3: 32}
#: The most the count of steps adds to a score: under the 100 points between two difficulties of the
#: ladder (a naked single's 40 and a hidden single's 140).
MOST_STEPS: Final = 99


Status = Literal["solved", "no-solution", "multiple-solutions", "invalid", "timed-out"]


@dataclass(frozen=True)
class Grade:
    """The grader's answer for one puzzle.

    ``status`` is ``solved`` for a puzzle with exactly one solution (the grader then always finishes
    it), or says why there is no grade: ``invalid`` (not an 81-cell grid of 1-9 and '.'/'0', or
    clashing givens), ``no-solution``, ``multiple-solutions`` or ``timed-out`` (not settled within the time
    limit given); ``reason`` says what is wrong and is
    None when solved. Only a solved puzzle carries its solution, a difficulty, score, tier, stars and a path.
    """

    status: Status
    reason: str | None
    difficulty: str | None  # "Easy" | "Medium" | "Hard" | "Expert"
    difficulty_level: int | None  # 1..4
    score: int | None
    tier: str | None
    stars: int | None
    hardest_technique: str | None
    techniques: list[str]  # distinct names in order of first use
    solve_path: list[dict[str, object]]
    solution: str | None = None  # the 81 digits, when solved

    @property
    def solved(self) -> bool:
        return self.status == "solved"

    def to_dict(self, puzzle: str) -> dict[str, object]:
        """The grade of ``puzzle`` as one JSON object, in a fixed key order (``sudokupool grade --json``,
        ``GET /api/v2/grids/{grid}``)."""
        return {
            "puzzle": puzzle,
            "status": self.status,
            "reason": self.reason,
            "solution": self.solution,
            "difficulty": self.difficulty,
            "difficulty_level": self.difficulty_level,
            "score": self.score,
            "tier": self.tier,
            "stars": self.stars,
            "hardest_technique": self.hardest_technique,
            "techniques": self.techniques,
            "solve_path": self.solve_path,
        }


def _ungraded(status: Status, reason: str) -> Grade:
    return Grade(status, reason, None, None, None, None, None, None, [], [])


def level_of(techniques: list[str], total: int) -> int:
    """The difficulty level (1-4): the hardest technique's, raised while ``total`` (the sum of the step
    scores, HoDoKu's puzzle score) exceeds its maximum."""
    level = max((LEVEL[t] for t in techniques), default=1)
    while level in MAX_SCORE and total > MAX_SCORE[level]:
        level += 1
    return level


def score_of(steps: Sequence[Step]) -> int:
    """The puzzle's score: ten times its hardest step's difficulty (its score, plus a bonus for a long
    chain, net or ALS move: :func:`~sudokupool.sudoku.techniques.step.difficulty`), plus a tenth of the
    difficulties of its hard steps (``HARD_STEP`` and up), rounded down, plus how many steps as hard as the
    hardest it takes, counting each step by its difficulty over the hardest one's (so a step half as hard
    counts a half), less the hardest step itself, at most 99 (:data:`MOST_STEPS`).

    The hardest step dominates, as it does in Sudoku Explainer's rating; the hard steps rank the puzzles
    that share a hardest step, and the count of steps ranks those that share both: it never reaches the
    next difficulty (ten points of difficulty are a hundred of score), so the order by hardest step holds,
    and it spreads Easy and Medium puzzles, which have no hard steps."""
    difficulties = [step.difficulty for step in steps]
    if not difficulties:
        return 0
    top = max(difficulties)
    hard = sum(d for d in difficulties if d >= HARD_STEP)
    return 10 * top + hard // 10 + min(MOST_STEPS, sum(difficulties) // top - 1)


def tier_of(score: int) -> str:
    return [name for low, name in TIERS if score >= low][-1]


def stars_of(score: int) -> int:
    return [stars for low, stars in STARS if score >= low][-1]


def solve_steps(puzzle: str, solution: str, max_level: int = 4, *, deadline: float | None = None) -> list[Step] | None:
    """The steps the grader takes on ``puzzle`` (unique, with ``solution``) until the grid is full; None as
    soon as the puzzle is sure to be harder than level ``max_level`` (a step of a higher level, or a total
    past the level's maximum), which spares the rest of the work when only easier puzzles are wanted.

    The techniques are tried easiest first; when none applies, :func:`brute_force` places one cell
    from the solution, so the path always ends at the solution. Raise :class:`TimeLimitExceeded` when
    ``time.monotonic()`` passes ``deadline`` (checked between steps).
    """
    memo.forget()  # what the finders remember of another puzzle would only take memory
    cg = Candidates.from_puzzle(puzzle)
    steps: list[Step] = []
    empty = cg.values.count(0)
    total = 0
    most = MAX_SCORE.get(max_level)
    finders = ADVANCED[: REACH[max_level]] if max_level in REACH else ADVANCED
    while empty:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeLimitExceeded
        step = full_house(cg) or naked_single(cg) or hidden_single(cg)
        if step is None:
            for finder in finders:
                step = finder(cg)
                if step is not None:
                    break
            else:
                if max_level in REACH:
                    return None  # every step left is harder than max_level
                step = brute_force(cg, solution)
        total += step.score
        if LEVEL[step.technique] > max_level or (most is not None and total > most):
            return None
        for cell, digit in step.placements:
            cg.place(cell, digit)
            empty -= 1
        for cell, digit in step.eliminations:
            cg.eliminate(cell, digit)
        steps.append(step)
    return steps


def grade(text: str, time_limit: float | None = None) -> Grade:
    """Grade the puzzle ``text`` (81 cells, '.' or '0' for empty) by solving it like a human would.

    Never raises for bad input: a malformed grid, clashing givens, no solution or several solutions
    come back as a :class:`Grade` with that status and a reason, and no score; so does a puzzle not graded
    within ``time_limit`` seconds (``timed-out``).
    """
    graded = grade_within(text, 4, time_limit)
    assert graded is not None  # no puzzle is harder than level 4
    return graded


def grade_within(text: str, max_level: int, time_limit: float | None = None) -> Grade | None:
    """:func:`grade`, or None as soon as the puzzle is sure to be harder than level ``max_level``."""
    deadline = None if time_limit is None else time.monotonic() + time_limit
    try:
        return _grade(text, max_level, deadline)
    except TimeLimitExceeded:
        return _ungraded("timed-out", f"not graded within the time limit of {time_limit:g} s")


def _grade(text: str, max_level: int, deadline: float | None) -> Grade | None:
    checked = check_grid(text, deadline=deadline)
    if checked.verdict != "unique":
        assert checked.reason is not None
        return _ungraded(checked.verdict, checked.reason)
    puzzle, solution = checked.grid, checked.solution
    assert puzzle is not None and solution is not None
    steps = solve_steps(puzzle, solution, max_level, deadline=deadline)
    if steps is None:
        return None
    techniques: list[str] = []
    for step in steps:
        if step.technique not in techniques:
            techniques.append(step.technique)
    score = score_of(steps)
    hardest = max(techniques, key=lambda t: SCORES[t]) if techniques else None
    level = level_of(techniques, sum(step.score for step in steps))
    return Grade(
        status="solved",
        reason=None,
        difficulty=DIFFICULTIES[level - 1],
        difficulty_level=level,
        score=score,
        tier=tier_of(score),
        stars=stars_of(score),
        hardest_technique=hardest,
        techniques=techniques,
        solve_path=[step.to_dict() for step in steps],
        solution=solution,
    )
