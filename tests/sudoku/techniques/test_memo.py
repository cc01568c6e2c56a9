from __future__ import annotations

from pencil import Pencil, moves, row

from sudokupool.sudoku.techniques.fish import finned_x_wing, sashimi_x_wing, x_wing
from sudokupool.sudoku.techniques.memo import digit_masks
from sudokupool.sudoku.techniques.subsets import naked_pair


def x_wing_grid() -> Pencil:
    return Pencil().only(4, row(2), ["r2c3", "r2c8"]).only(4, row(6), ["r6c3", "r6c8"])


def test_digit_masks_follow_the_candidates() -> None:
    p = x_wing_grid()
    assert digit_masks(p.cg)[4] >> 1 & 1  # r1c2 still holds 4
    p.cg.eliminate(1, 4)
    assert not digit_masks(p.cg)[4] >> 1 & 1
    assert digit_masks(p.cg)[5] == (1 << 81) - 1


def test_a_remembered_answer_is_dropped_once_its_digit_changes() -> None:
    p = x_wing_grid()
    first = x_wing(p.cg)
    assert first is not None
    assert x_wing(p.cg) is first  # same candidates: the same answer
    for cell, digit in first.eliminations:
        p.cg.eliminate(cell, digit)
    assert x_wing(p.cg) is None  # the X-Wing has nothing left to remove
    # A grid with the same candidates again gets the remembered answer's eliminations.
    again = x_wing(x_wing_grid().cg)
    assert again is not None
    assert moves(again.eliminations) == moves(first.eliminations)


def test_finned_and_sashimi_share_one_search_but_not_answers() -> None:
    # 4 in row 2 only at r2c3, r2c8 and the fin r2c9; in row 6 only at r6c3 and r6c8.
    p = Pencil().only(4, row(2), ["r2c3", "r2c8", "r2c9"]).only(4, row(6), ["r6c3", "r6c8"])
    step = finned_x_wing(p.cg)
    assert step is not None
    assert step.technique == "Finned X-Wing"
    assert moves(step.eliminations) == {("r1c8", 4), ("r3c8", 4)}
    assert sashimi_x_wing(p.cg) is None


def test_a_house_answer_is_recomputed_when_that_house_changes() -> None:
    p = Pencil().set("r1c1", [1, 2]).set("r1c2", [1, 2])
    step = naked_pair(p.cg)
    assert step is not None
    assert step.technique == "Naked Pair"
    for cell, digit in step.eliminations:
        p.cg.eliminate(cell, digit)
    after = naked_pair(p.cg)
    assert step.houses == [18]  # boxes first: box 1
    assert after is not None
    assert after.houses == [0]  # then row 1, once box 1 has nothing left to give
