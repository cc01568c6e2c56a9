from __future__ import annotations

from pencil import Pencil, col, moves, row

from sudokupool.sudoku.techniques.fish import fish, jellyfish, swordfish, x_wing


def test_x_wing_on_4_in_rows_2_and_6_columns_3_and_8() -> None:
    p = Pencil().only(4, row(2), ["r2c3", "r2c8"]).only(4, row(6), ["r6c3", "r6c8"])
    step = x_wing(p.cg)
    assert step is not None
    assert step.technique == "X-Wing"
    assert moves(step.eliminations) == {(f"r{r}c{c}", 4) for r in (1, 3, 4, 5, 7, 8, 9) for c in (3, 8)}
    assert step.to_dict()["cells"] == ["r2c3", "r2c8", "r6c3", "r6c8"]
    assert step.to_dict()["houses"] == ["row 2", "row 6", "column 3", "column 8"]
    assert step.digits == [4]


def test_swordfish_on_7_in_columns_1_5_9() -> None:
    p = Pencil().only(7, col(1), ["r2c1", "r4c1"]).only(7, col(5), ["r4c5", "r8c5"]).only(7, col(9), ["r2c9", "r8c9"])
    step = swordfish(p.cg)
    assert step is not None
    assert step.technique == "Swordfish"
    assert moves(step.eliminations) == {(f"r{r}c{c}", 7) for r in (2, 4, 8) for c in (2, 3, 4, 6, 7, 8)}
    assert step.to_dict()["houses"] == ["column 1", "column 5", "column 9", "row 2", "row 4", "row 8"]


def test_jellyfish_on_2_in_rows_1_3_5_7() -> None:
    p = (
        Pencil()
        .only(2, row(1), ["r1c2", "r1c4"])
        .only(2, row(3), ["r3c4", "r3c6"])
        .only(2, row(5), ["r5c6", "r5c8"])
        .only(2, row(7), ["r7c8", "r7c2"])
    )
    step = jellyfish(p.cg)
    assert step is not None
    assert step.technique == "Jellyfish"
    assert moves(step.eliminations) == {(f"r{r}c{c}", 2) for r in (2, 4, 6, 8, 9) for c in (2, 4, 6, 8)}


def test_no_fish_when_the_cover_lines_are_already_clear() -> None:
    # An X-Wing whose columns hold 4 nowhere else removes nothing, so no step is reported.
    p = Pencil()
    for r in range(1, 10):
        if r not in (2, 6):
            for c in (3, 8):
                p.cg.cands[(r - 1) * 9 + c - 1] &= ~(1 << 3)
    p.only(4, row(2), ["r2c3", "r2c8"]).only(4, row(6), ["r6c3", "r6c8"])
    assert fish(p.cg, 2) is None
