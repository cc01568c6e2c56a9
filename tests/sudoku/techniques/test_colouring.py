from __future__ import annotations

from pencil import Pencil, box, col, moves, row

from sudokupool.sudoku.techniques.colouring import simple_colors


def test_simple_colors_trap() -> None:
    # Strong links on 9: box 1 r1c1=r3c3, column 3 r3c3=r5c3, box 4 r5c3=r6c1.
    # Colours {r1c1, r5c3} and {r3c3, r6c1}; r7c1, r8c1, r9c1 see r1c1 and r6c1.
    p = Pencil().only(9, box(1), ["r1c1", "r3c3"]).only(9, col(3), ["r3c3", "r5c3"]).only(9, box(4), ["r5c3", "r6c1"])
    step = simple_colors(p.cg)
    assert step is not None
    assert step.technique == "Simple Colors"
    assert moves(step.eliminations) == {("r7c1", 9), ("r8c1", 9), ("r9c1", 9)}
    assert set(step.to_dict()["cells"]) == {"r1c1", "r3c3", "r5c3", "r6c1"}  # type: ignore[arg-type]


def test_simple_colors_wrap() -> None:
    # Chain r1c1=r1c5 (row 1), r1c5=r4c5 (column 5), r4c5=r4c2 (row 4), r4c2=r2c2 (column 2):
    # r1c1, r4c5 and r2c2 share a colour, and r1c1 sees r2c2, so that colour is false.
    p = (
        Pencil()
        .only(9, row(1), ["r1c1", "r1c5"])
        .only(9, col(5), ["r1c5", "r4c5"])
        .only(9, row(4), ["r4c5", "r4c2"])
        .only(9, col(2), ["r4c2", "r2c2"])
    )
    step = simple_colors(p.cg)
    assert step is not None
    assert moves(step.eliminations) == {("r1c1", 9), ("r2c2", 9), ("r4c5", 9)}


def test_no_colouring_on_a_blank_grid() -> None:
    assert simple_colors(Pencil().cg) is None
