"""Human-style solving techniques, one family per module, in the order a solver tries them.

Every finder takes a :class:`~sudokupool.sudoku.candidates.Candidates` and returns the first
:class:`Step` of its technique that changes something, or None. The order follows HoDoKu's
default solver order (sudoku/Options.java), which is close to ascending score.
"""

from __future__ import annotations

from collections.abc import Callable

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.techniques import (
    aic,
    als,
    chains,
    colouring,
    fish,
    forcing,
    intersections,
    single_digit,
    singles,
    subsets,
    uniqueness,
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
    uniqueness.bug_plus_1,
    single_digit.empty_rectangle,
    uniqueness.uniqueness_1,
    uniqueness.uniqueness_2,
    uniqueness.uniqueness_3,
    uniqueness.uniqueness_4,
    uniqueness.hidden_rectangle,
    fish.finned_x_wing,
    fish.sashimi_x_wing,
    fish.finned_swordfish,
    fish.sashimi_swordfish,
    fish.finned_jellyfish,
    fish.sashimi_jellyfish,
    aic.aic,
    aic.grouped_aic,
    als.als_xz,
    als.als_xy_wing,
    als.als_chain,
    forcing.forcing_chain,
    forcing.forcing_net,
)

__all__ = ["ADVANCED", "SCORES", "SINGLES", "Finder", "Step"]
