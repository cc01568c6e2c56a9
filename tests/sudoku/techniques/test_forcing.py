from __future__ import annotations

from pencil import Pencil, from_pencilmarks, moves

from sudokupool.sudoku.justify import unjustified
from sudokupool.sudoku.solver import solve
from sudokupool.sudoku.techniques.forcing import (
    Run,
    Tally,
    forcing_chain,
    forcing_net,
    locked_forcing_net,
    nested_forcing_net,
)


def test_forcing_chain_contradiction() -> None:
    # r1c1, r1c2 and r1c3 hold only 1 and 2: if r1c1 were 1, r1c2 would be 2 and r1c3 would have nothing left.
    p = Pencil().set("r1c1", (1, 2)).set("r1c2", (1, 2)).set("r1c3", (1, 2))
    step = forcing_chain(p.cg)
    assert step is not None
    assert step.technique == "Forcing Chain Contradiction"
    assert step.score == 500
    assert moves(step.eliminations) == {("r1c1", 1)}
    assert step.explanation == (
        "If r1c1 were 1, then r1c2 = 2, and r1c3 would have no candidate left; so r1c1 is not 1."
    )
    assert unjustified(p.cg, step.to_dict()) == []


def xy_ring() -> Pencil:
    # r5c5 is 4 or 6; r5c1 holds 4/7, r5c9 6/7 and r5c3 7/8.
    return Pencil().set("r5c5", (4, 6)).set("r5c1", (4, 7)).set("r5c9", (6, 7)).set("r5c3", (7, 8))


def test_the_first_cell_with_fewest_candidates_gives_the_proof() -> None:
    # r5c2 = 4 would end in a contradiction (r5c1 = 7, r5c5 = 6, r5c9 left with nothing), but r5c1, the
    # first of the two-candidate cells, is assumed first, and its two branches already agree.
    p = xy_ring()
    r5c2 = 4 * 9 + 1
    assert Run(p.cg, r5c2, 4, chain=True, tally=Tally(p.cg)).contradiction is not None
    step = forcing_chain(p.cg)
    assert step is not None
    assert step.technique == "Forcing Chain Verity"
    assert moves(step.eliminations) == {("r5c8", 6)}
    assert step.explanation == (
        "Whichever of 4 or 7 r5c1 holds, r5c8 is not 6 (if r5c1 = 4: r5c5 = 6; if r5c1 = 7: r5c9 = 6); "
        "so r5c8 is not 6."
    )
    assert unjustified(p.cg, step.to_dict()) == []


# Reached by the grader on Arto Inkala's puzzle, published in 2012 as "the world's hardest sudoku"
# (8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4..): no chain left.
INKALA_STATE = """
|8      1246   24569  2347   12357  1234   1356   4579   1345679|
|12459  124    3      6      12578  1248   158    45789  14579 |
|1456   7      456    348    9      1348   2      458    13456 |
|123469 5      2469   2389   2368   7      168    2489   12469 |
|12369  12368  269    2389   4      5      7      289    1269  |
|24679  2468   24679  1      268    2689   568    3      24569 |
|23457  234    1      23479  237    2349   35     6      8     |
|23467  2346   8      5      2367   2346   9      1      237   |
|23567  9      2567   2378   123678 12368  4      257    2357  |
"""


def test_forcing_net_where_no_chain_is_left() -> None:
    cg = from_pencilmarks(INKALA_STATE)
    assert forcing_chain(cg) is None
    step = forcing_net(cg)
    assert step is not None
    assert step.technique == "Forcing Net Contradiction"
    assert step.score == 700
    assert moves(step.eliminations) == {("r7c6", 3)}
    assert step.explanation == (
        "If r7c6 were 3, then r7c4 = 9, r6c6 = 9, r1c7 = 3, r8c6 = 4, r3c4 = 3, r9c6 = 6, r1c4 = 4, r9c5 = 1 and "
        "r9c4 = 7, and row 9 would have no place for 8; so r7c6 is not 3."
    )
    assert unjustified(cg, step.to_dict()) == []


INKALA = "8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4.."
# Later on the grader's path for Inkala's puzzle: no forcing net of singles applies.
INKALA_LOCKED = """
|8      1246   24569  2347   12357  1234   13569  4579   1345679|
|12459  124    3      6      12578  1248   1589   45789  14579 |
|1456   7      456    348    9      1348   2      458    13456 |
|123469 5      2469   2389   2368   7      1689   2489   12469 |
|12369  12368  269    2389   4      5      7      289    1269  |
|24679  2468   24679  1      268    2689   5689   3      24569 |
|23457  234    1      23479  237    2349   359    6      8     |
|23467  2346   8      5      2367   23469  39     1      2379  |
|23567  9      2567   2378   123678 12368  4      257    2357  |
"""
# Three forcing-net steps later: no net applies, even one that follows locked candidates.
INKALA_NESTED = INKALA_LOCKED.replace("2347   12357", "247    12357").replace("13569  4579", "1356   4579")
INKALA_NESTED = INKALA_NESTED.replace("|24679  2468   24679", "|2479   2468   2479 ")


def test_a_net_that_follows_locked_candidates() -> None:
    cg = from_pencilmarks(INKALA_LOCKED)
    assert forcing_net(cg) is None
    step = locked_forcing_net(cg)
    assert step is not None
    assert step.technique == "Forcing Net Contradiction"
    assert step.score == 700
    assert moves(step.eliminations) == {("r1c4", 3)}
    solution = solve(INKALA)
    assert solution is not None and solution[3] != "3"
    # If r1c4 were 3, 3 in box 3 is confined to r3c9 ... : the proof goes through locked candidates, whose
    # cells the step names, and the justifier accepts it from them.
    assert step.explanation.startswith("If r1c4 were 3, then r3c9 = 3, r4c5 = 3")
    assert unjustified(cg, step.to_dict()) == []


def test_a_nested_net_where_no_other_net_applies() -> None:
    cg = from_pencilmarks(INKALA_NESTED)
    assert forcing_net(cg) is None
    assert locked_forcing_net(cg) is None
    step = nested_forcing_net(cg)
    assert step is not None
    assert step.technique == "Forcing Net Contradiction"
    assert moves(step.eliminations) == {("r8c7", 3)}
    solution = solve(INKALA)
    assert solution is not None and solution[7 * 9 + 6] != "3"
    assert step.explanation.startswith("If r8c7 were 3, then r7c2 = 3")
    assert "(inside this case, r6c3 is not 2, " in step.explanation
    assert step.explanation.endswith(
        "since assuming each leads to a contradiction), and row 7 would have no place for 9; so r8c7 is not 3."
    )
    data = step.to_dict()
    assert unjustified(cg, data) == []
    # The cells the nested assumptions looked at are part of the proof: without them it does not hold.
    placed = {f"r{c // 9 + 1}c{c % 9 + 1}" for c, _ in step.eliminations}
    outer = [name for name in data["cells"] if f"{name} = " in step.explanation.split(" (inside")[0] or name in placed]
    assert unjustified(cg, {**data, "cells": outer}) == ["its cells do not rule out 3 in r8c7"]
