"""One deduction of a human-style solve, and how it is written into a solve path."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sudokupool.sudoku.grid import cell_name, house_name
from sudokupool.sudoku.technique_table import SCORES

# Chains, nets and ALS moves: a long one is harder to find than a short one, as in Sudoku Explainer's
# ratings, so for the puzzle's score (not the step's own ``score``) such a step is as hard as its
# technique's score plus LENGTH_BONUS for each of the sizes in LENGTH_STEPS its cell count exceeds
# (Sudoku Explainer adds 0.1 to a chain's rating at each of these lengths). See :func:`difficulty`.
LENGTHY: frozenset[str] = frozenset(
    {
        "X-Chain",
        "XY-Chain",
        "AIC",
        "Discontinuous Nice Loop",
        "Continuous Nice Loop",
        "Grouped AIC",
        "Grouped Discontinuous Nice Loop",
        "Grouped Continuous Nice Loop",
        "Almost Locked Set XZ-Rule",
        "Almost Locked Set XY-Wing",
        "Almost Locked Set XY-Chain",
        "Death Blossom",
        "Forcing Chain Contradiction",
        "Forcing Chain Verity",
        "Forcing Net Contradiction",
        "Forcing Net Verity",
    }
)
LENGTH_BONUS = 10
# Sudoku Explainer, whose ratings the score is measured against, has no W-Wing: it meets the pattern
# only as a chain (a W-Wing is an XY-Chain whose middle link is a digit's strong link instead of a
# bivalue cell), so for the puzzle's score a W-Wing is as hard as an XY-Chain.
RATED_AS: dict[str, str] = {"W-Wing": "XY-Chain"}


def length_steps(cells: int) -> int:
    """How many of the sizes 4, 6, 8, 12, 16, 24, 32, 48, 64, ... (each 3/2 then 4/3 of the one before)
    ``cells`` exceeds."""
    steps, size, grow_half = 0, 4, True
    while cells > size:
        steps += 1
        size = size * 3 // 2 if grow_half else size * 4 // 3
        grow_half = not grow_half
    return steps


def difficulty(technique: str, cells: int) -> int:
    """How hard a step of ``technique`` naming ``cells`` cells is, for the puzzle's score: the
    technique's score (a W-Wing's is an XY-Chain's, see ``RATED_AS``), plus a bonus that grows with the
    size of a chain, net or ALS move."""
    score = SCORES[RATED_AS.get(technique, technique)]
    if technique in LENGTHY:
        return score + LENGTH_BONUS * length_steps(cells)
    return score


@dataclass
class Step:
    """A technique's finding: what it fills or removes, and why."""

    technique: str
    placements: list[tuple[int, int]] = field(default_factory=list)  # (cell, digit)
    eliminations: list[tuple[int, int]] = field(default_factory=list)  # (cell, digit)
    cells: list[int] = field(default_factory=list)
    houses: list[int] = field(default_factory=list)
    digits: list[int] = field(default_factory=list)
    explanation: str = ""

    @property
    def score(self) -> int:
        return SCORES[self.technique]

    @property
    def difficulty(self) -> int:
        return difficulty(self.technique, len(self.cells))

    def to_dict(self) -> dict[str, object]:
        """The step as a solve-path object (docs/export-format.md)."""
        return {
            "technique": self.technique,
            "score": self.score,
            "placements": [{"cell": cell_name(c), "digit": d} for c, d in self.placements],
            "eliminations": [{"cell": cell_name(c), "digit": d} for c, d in sorted(self.eliminations)],
            "cells": [cell_name(c) for c in self.cells],
            "houses": [house_name(h) for h in self.houses],
            "digits": list(self.digits),
            "explanation": self.explanation,
        }


def names(cells: Iterable[int]) -> str:
    """``r1c2, r1c5 and r3c4`` for a handful of cells."""
    return join([cell_name(c) for c in cells])


def join(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def digit_list(digits: Iterable[int]) -> str:
    return "/".join(str(d) for d in digits)


def removal_text(eliminations: list[tuple[int, int]]) -> str:
    """``5 from r1c7 and r1c8`` or ``2 from r4c4, 3 from r4c5`` for a step's eliminations."""
    by_digit: dict[int, list[int]] = {}
    for cell, digit in sorted(eliminations, key=lambda e: (e[1], e[0])):
        by_digit.setdefault(digit, []).append(cell)
    return "; ".join(f"{d} from {names(cells)}" for d, cells in by_digit.items())


def capitalised_house(house: int) -> str:
    name = house_name(house)
    return name[0].upper() + name[1:]
