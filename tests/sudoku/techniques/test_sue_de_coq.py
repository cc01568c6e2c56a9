from __future__ import annotations

from pencil import Pencil, moves

from sudokupool.sudoku.justify import unjustified
from sudokupool.sudoku.techniques.sue_de_coq import sue_de_coq


def test_sue_de_coq_on_row_1_and_box_1() -> None:
    # r1c1 and r1c2 (where row 1 crosses box 1) hold 1/2/3/4; r1c7 holds 1/2 and r3c3 holds 3/4:
    # four cells, four digits, none can repeat. Row 1 loses 1/2 elsewhere, box 1 loses 3/4.
    p = Pencil().set("r1c1", (1, 2, 3, 4)).set("r1c2", (1, 2, 3, 4)).set("r1c7", (1, 2)).set("r3c3", (3, 4))
    step = sue_de_coq(p.cg)
    assert step is not None
    assert step.technique == "Sue de Coq"
    assert step.score == 250
    row_rest = [f"r1c{c}" for c in (3, 4, 5, 6, 8, 9)]
    box_rest = ["r1c3", "r2c1", "r2c2", "r2c3", "r3c1", "r3c2"]
    assert moves(step.eliminations) == {(c, d) for c in row_rest for d in (1, 2)} | {
        (c, d) for c in box_rest for d in (3, 4)
    }
    assert step.to_dict()["cells"] == ["r1c1", "r1c2", "r1c7", "r3c3"]
    assert step.to_dict()["houses"] == ["row 1", "box 1"]
    assert step.explanation.startswith("Where row 1 crosses box 1, r1c1 and r1c2 hold 1/2/3/4;")
    assert unjustified(p.cg, step.to_dict()) == []


def test_no_sue_de_coq_when_the_sides_share_a_digit() -> None:
    # r3c3 holds 2/3 instead: the line's 1/2 and the box's 2/3 overlap, so 2 could be counted twice.
    p = Pencil().set("r1c1", (1, 2, 3, 4)).set("r1c2", (1, 2, 3, 4)).set("r1c7", (1, 2)).set("r3c3", (2, 3))
    assert sue_de_coq(p.cg) is None


def test_no_sue_de_coq_on_a_blank_grid() -> None:
    assert sue_de_coq(Pencil().cg) is None
