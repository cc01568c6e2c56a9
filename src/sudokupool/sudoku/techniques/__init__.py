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
    sue_de_coq,
    uniqueness,
    wings,
)
from sudokupool.sudoku.techniques.step import Step

Finder = Callable[[Candidates], Step | None]

SINGLES: tuple[Finder, ...] = (singles.full_house, singles.naked_single, singles.hidden_single)

# HoDoKu's solver order (its step index in brackets); techniques HoDoKu has and we do not are named
# in docs/grading.md.
ADVANCED: tuple[Finder, ...] = (
    intersections.pointing,  # 1200
    intersections.claiming,  # 1210
    subsets.naked_pair,  # 1300
    subsets.naked_triple,  # 1400
    subsets.hidden_pair,  # 1500
    subsets.hidden_triple,  # 1600
    subsets.naked_quadruple,  # 2000
    subsets.hidden_quadruple,  # 2100
    fish.x_wing,  # 2200
    fish.swordfish,  # 2300
    fish.jellyfish,  # 2400
    uniqueness.bug_plus_1,  # 2900
    single_digit.skyscraper,  # 3000
    single_digit.two_string_kite,  # 3100
    single_digit.turbot_fish,  # 3120
    single_digit.empty_rectangle,  # 3170
    wings.w_wing,  # 3200
    wings.xy_wing,  # 3300
    wings.xyz_wing,  # 3400
    uniqueness.uniqueness_1,  # 3500
    uniqueness.uniqueness_2,  # 3600
    uniqueness.uniqueness_3,  # 3700
    uniqueness.uniqueness_4,  # 3800
    uniqueness.hidden_rectangle,  # 4010
    fish.finned_x_wing,  # 4100
    fish.sashimi_x_wing,  # 4200
    fish.finned_swordfish,  # 4300
    fish.sashimi_swordfish,  # 4400
    fish.finned_jellyfish,  # 4500
    fish.sashimi_jellyfish,  # 4600
    sue_de_coq.sue_de_coq,  # 5300
    colouring.simple_colors,  # 5330
    chains.x_chain,  # 5400
    chains.xy_chain,  # 5500
    aic.aic,  # 5600
    aic.grouped_aic,  # 5650
    als.als_xz,  # 5700
    als.als_xy_wing,  # 5800
    als.als_chain,  # 5900
    forcing.forcing_chain,  # 8500
    forcing.forcing_net,  # 8600
    forcing.locked_forcing_net,  # 8600, when the nets of singles find nothing
    forcing.nested_forcing_net,  # 8600, the last resort before Brute Force
)

__all__ = ["ADVANCED", "SINGLES", "Finder", "Step"]
