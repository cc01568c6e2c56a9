from __future__ import annotations

from pencil import Pencil, moves, row

from sudokupool.sudoku.techniques.wings import w_wing, xy_wing, xyz_wing


def test_xy_wing() -> None:
    # Pivot r1c1 (1/2), pincers r1c5 (1/3) and r5c1 (2/3): one pincer is 3.
    p = Pencil().set("r1c1", (1, 2)).set("r1c5", (1, 3)).set("r5c1", (2, 3))
    step = xy_wing(p.cg)
    assert step is not None
    assert step.technique == "XY-Wing"
    assert moves(step.eliminations) == {("r5c5", 3)}
    assert step.to_dict()["cells"] == ["r1c1", "r1c5", "r5c1"]


def test_xyz_wing() -> None:
    # Pivot r1c1 (1/2/3), pincers r1c2 (1/3) and r5c1 (2/3): one of the three is 3.
    p = Pencil().set("r1c1", (1, 2, 3)).set("r1c2", (1, 3)).set("r5c1", (2, 3))
    step = xyz_wing(p.cg)
    assert step is not None
    assert step.technique == "XYZ-Wing"
    assert moves(step.eliminations) == {("r2c1", 3), ("r3c1", 3)}
    assert xy_wing(p.cg) is None


def test_w_wing() -> None:
    # r1c1 and r5c5 hold 5/8; row 3's 5 is in r3c2 (sees r1c1) or r3c5 (sees r5c5): one of them is 8.
    p = Pencil().set("r1c1", (5, 8)).set("r5c5", (5, 8)).only(5, row(3), ["r3c2", "r3c5"])
    step = w_wing(p.cg)
    assert step is not None
    assert step.technique == "W-Wing"
    assert moves(step.eliminations) == {("r1c5", 8), ("r5c1", 8)}
    assert step.to_dict()["houses"] == ["row 3"]


def test_no_w_wing_without_the_strong_link() -> None:
    p = Pencil().set("r1c1", (5, 8)).set("r5c5", (5, 8))
    assert w_wing(p.cg) is None
