"""The grader's techniques, one row each: name, score, level and the module of ``sudoku/techniques`` that finds it.

The order is the grader's table's: bit ``i`` of a pack's technique sets is row ``i``, and the OpenAPI
document lists the names in it. Importing this module imports no finder (the finders are 2 MB of each
service worker's private memory, which a service that maps packs never runs).

Scores are HoDoKu's per-step scores (sudoku/Options.java, DEFAULT_SOLVER_STEPS); the level (1-4) is the
difficulty a step implies: HoDoKu's level for the step, with its UNFAIR and EXTREME both Expert. See
docs/grading.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple


class Technique(NamedTuple):
    name: str
    #: HoDoKu's score for one step of it.
    score: int
    #: The difficulty (1-4, an index into ``DIFFICULTIES`` plus one) a step of it implies.
    level: int
    #: The module of ``sudokupool.sudoku.techniques`` whose finder makes its steps.
    module: str


TECHNIQUES: Final[tuple[Technique, ...]] = (
    Technique("Full House", 4, 1, "singles"),
    Technique("Naked Single", 4, 1, "singles"),
    Technique("Hidden Single", 14, 1, "singles"),
    Technique("Locked Candidates Type 1 (Pointing)", 50, 2, "intersections"),
    Technique("Locked Candidates Type 2 (Claiming)", 50, 2, "intersections"),
    Technique("Naked Pair", 60, 2, "subsets"),
    Technique("Naked Triple", 80, 2, "subsets"),
    Technique("Hidden Pair", 70, 2, "subsets"),
    Technique("Hidden Triple", 100, 2, "subsets"),
    Technique("Naked Quadruple", 120, 3, "subsets"),
    Technique("Hidden Quadruple", 150, 3, "subsets"),
    Technique("X-Wing", 140, 3, "fish"),
    Technique("Swordfish", 150, 3, "fish"),
    Technique("Jellyfish", 160, 3, "fish"),
    Technique("Skyscraper", 130, 3, "single_digit"),
    Technique("2-String Kite", 150, 3, "single_digit"),
    Technique("Turbot Fish", 120, 3, "single_digit"),
    Technique("W-Wing", 150, 3, "wings"),
    Technique("XY-Wing", 160, 3, "wings"),
    Technique("XYZ-Wing", 180, 3, "wings"),
    Technique("Simple Colors", 150, 3, "colouring"),
    Technique("X-Chain", 260, 4, "chains"),
    Technique("XY-Chain", 260, 4, "chains"),
    Technique("Bivalue Universal Grave + 1", 100, 3, "uniqueness"),
    Technique("Empty Rectangle", 120, 3, "single_digit"),
    Technique("Uniqueness Test 1", 100, 3, "uniqueness"),
    Technique("Uniqueness Test 2", 100, 3, "uniqueness"),
    Technique("Uniqueness Test 3", 100, 3, "uniqueness"),
    Technique("Uniqueness Test 4", 100, 3, "uniqueness"),
    Technique("Hidden Rectangle", 100, 3, "uniqueness"),
    Technique("Finned X-Wing", 130, 3, "fish"),
    Technique("Sashimi X-Wing", 150, 3, "fish"),
    Technique("Finned Swordfish", 200, 4, "fish"),
    Technique("Sashimi Swordfish", 240, 4, "fish"),
    Technique("Finned Jellyfish", 250, 4, "fish"),
    Technique("Sashimi Jellyfish", 260, 4, "fish"),
    Technique("Sue de Coq", 250, 4, "sue_de_coq"),
    Technique("AIC", 280, 4, "aic"),
    Technique("Discontinuous Nice Loop", 280, 4, "aic"),
    Technique("Grouped AIC", 300, 4, "aic"),
    Technique("Grouped Discontinuous Nice Loop", 300, 4, "aic"),
    Technique("Continuous Nice Loop", 280, 4, "aic"),
    Technique("Grouped Continuous Nice Loop", 300, 4, "aic"),
    Technique("Almost Locked Set XZ-Rule", 300, 4, "als"),
    Technique("Almost Locked Set XY-Wing", 320, 4, "als"),
    Technique("Almost Locked Set XY-Chain", 340, 4, "als"),
    Technique("Death Blossom", 360, 4, "als"),
    Technique("Forcing Chain Contradiction", 500, 4, "forcing"),
    Technique("Forcing Chain Verity", 500, 4, "forcing"),
    Technique("Forcing Net Contradiction", 700, 4, "forcing"),
    Technique("Forcing Net Verity", 700, 4, "forcing"),
    Technique("Brute Force", 10000, 4, "last_resort"),
)

#: The names, in the table's order.
NAMES: Final = tuple(technique.name for technique in TECHNIQUES)
#: Score and level by name, for the grader's per-step lookups.
SCORES: Final[Mapping[str, int]] = {technique.name: technique.score for technique in TECHNIQUES}
LEVEL: Final[Mapping[str, int]] = {technique.name: technique.level for technique in TECHNIQUES}
