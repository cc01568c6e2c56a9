"""Human-style solving techniques, one family per module, in the order a solver tries them.

Every finder takes a :class:`~sudokupool.sudoku.candidates.Candidates` and returns the first
:class:`Step` of its technique that changes something, or None. The order follows HoDoKu's
default solver order (sudoku/Options.java), which is close to ascending score.
"""

from __future__ import annotations

from collections.abc import Callable

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.techniques import (
    chains,
    colouring,
    fish,
    forcing,
    intersections,
    single_digit,
    singles,
    subsets,
    wings,
)
from sudokupool.sudoku.techniques.step import SCORES, Step

Finder = Callable[[Candidates], Step | None]

SINGLES: tuple[Finder, ...] = (singles.full_house, singles.naked_single, singles.hidden_single)

ADVANCED: tuple[Finder, ...] = (
    intersections.pointing,
    intersections.claiming,
    subsets.naked_pair,
    subsets.naked_triple,
    subsets.hidden_pair,
    subsets.hidden_triple,
    subsets.naked_quadruple,
    subsets.hidden_quadruple,
    fish.x_wing,
    fish.swordfish,
    fish.jellyfish,
    single_digit.skyscraper,
    single_digit.two_string_kite,
    single_digit.turbot_fish,
    wings.w_wing,
    wings.xy_wing,
    wings.xyz_wing,
    colouring.simple_colors,
    chains.x_chain,
    chains.xy_chain,
    forcing.forcing_chain,
    forcing.forcing_net,
)

__all__ = ["ADVANCED", "SCORES", "SINGLES", "Finder", "Step"]
