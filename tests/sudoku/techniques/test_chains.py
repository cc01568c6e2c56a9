from __future__ import annotations

from pencil import Pencil, moves, row

from sudokupool.sudoku.techniques.chains import x_chain, xy_chain
from sudokupool.sudoku.techniques.single_digit import turbot_fish


def test_x_chain_on_7_with_three_strong_links() -> None:
    # r1c1=r1c4 (row 1) - r3c5 (box 2) =r3c8 (row 3) - r7c8 (column 8) =r7c2 (row 7):
    # r1c1 or r7c2 is 7; r2c2 (box 1, column 2), r8c1 and r9c1 (column 1, box 7) see both.
    p = Pencil().only(7, row(1), ["r1c1", "r1c4"]).only(7, row(3), ["r3c5", "r3c8"]).only(7, row(7), ["r7c8", "r7c2"])
    assert turbot_fish(p.cg) is None
    step = x_chain(p.cg)
    assert step is not None
    assert step.technique == "X-Chain"
    assert moves(step.eliminations) == {("r2c2", 7), ("r8c1", 7), ("r9c1", 7)}
    assert set(step.to_dict()["cells"]) == {"r1c1", "r1c4", "r3c5", "r3c8", "r7c8", "r7c2"}  # type: ignore[arg-type]


def test_xy_chain() -> None:
    # r1c1 (1/2) - r1c5 (2/3) - r5c5 (3/4) - r5c9 (4/1): r1c1 or r5c9 is 1.
    p = Pencil().set("r1c1", (1, 2)).set("r1c5", (2, 3)).set("r5c5", (3, 4)).set("r5c9", (1, 4))
    step = xy_chain(p.cg)
    assert step is not None
    assert step.technique == "XY-Chain"
    assert moves(step.eliminations) == {("r1c9", 1), ("r5c1", 1)}
    assert step.digits == [1]
    assert set(step.to_dict()["cells"]) == {"r1c1", "r1c5", "r5c5", "r5c9"}  # type: ignore[arg-type]


def test_no_chain_on_a_blank_grid() -> None:
    assert x_chain(Pencil().cg) is None
    assert xy_chain(Pencil().cg) is None
