from __future__ import annotations

from pencil import Pencil, box, col, moves, row

from sudokupool.sudoku.techniques.single_digit import skyscraper, turbot_fish, two_string_kite


def test_skyscraper_on_1_in_rows_1_and_5() -> None:
    # Base r1c1/r5c1 in column 1; one of the tops r1c5 and r5c6 is 1.
    p = Pencil().only(1, row(1), ["r1c1", "r1c5"]).only(1, row(5), ["r5c1", "r5c6"])
    step = skyscraper(p.cg)
    assert step is not None
    assert step.technique == "Skyscraper"
    assert moves(step.eliminations) == {("r2c6", 1), ("r3c6", 1), ("r4c5", 1), ("r6c5", 1)}
    assert set(step.to_dict()["cells"]) == {"r1c1", "r1c5", "r5c1", "r5c6"}  # type: ignore[arg-type]
    assert two_string_kite(p.cg) is None


def test_two_string_kite_on_6() -> None:
    # Row 1: r1c2 or r1c7; column 1: r3c1 or r8c1; r1c2 and r3c1 share box 1, so r1c7 or r8c1 is 6.
    p = Pencil().only(6, row(1), ["r1c2", "r1c7"]).only(6, col(1), ["r3c1", "r8c1"])
    step = two_string_kite(p.cg)
    assert step is not None
    assert step.technique == "2-String Kite"
    assert moves(step.eliminations) == {("r8c7", 6)}
    assert skyscraper(p.cg) is None


def test_turbot_fish_on_3_with_a_box_link() -> None:
    # Box 1: r1c1 or r3c3; row 7: r7c3 or r7c8; r3c3 sees r7c3, so r1c1 or r7c8 is 3.
    p = Pencil().only(3, box(1), ["r1c1", "r3c3"]).only(3, row(7), ["r7c3", "r7c8"])
    step = turbot_fish(p.cg)
    assert step is not None
    assert step.technique == "Turbot Fish"
    assert moves(step.eliminations) == {("r1c8", 3)}
    assert skyscraper(p.cg) is None
    assert two_string_kite(p.cg) is None
