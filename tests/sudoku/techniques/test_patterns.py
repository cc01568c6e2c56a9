"""Empty Rectangle, finned and sashimi fish, AIC and grouped AIC on hand-built pencil marks."""

from __future__ import annotations

from pencil import Pencil, box, col, moves, row

from sudokupool.sudoku.justify import unjustified
from sudokupool.sudoku.techniques.aic import aic, grouped_aic
from sudokupool.sudoku.techniques.fish import finned_swordfish, finned_x_wing, sashimi_x_wing, x_wing
from sudokupool.sudoku.techniques.single_digit import empty_rectangle


def test_empty_rectangle() -> None:
    # Box 1 holds 5 only on row 2 and column 2 (r1c2, r2c1, r2c2, r2c3, r3c2); column 6 holds 5
    # only in r2c6 and r7c6. If r2c6 is 5, box 1's 5 is in column 2; if not, r7c6 is: r7c2 loses 5.
    p = Pencil().only(5, box(1), ["r1c2", "r2c1", "r2c2", "r2c3", "r3c2"]).only(5, col(6), ["r2c6", "r7c6"])
    step = empty_rectangle(p.cg)
    assert step is not None
    assert step.technique == "Empty Rectangle"
    assert step.score == 120
    assert moves(step.eliminations) == {("r7c2", 5)}
    assert unjustified(p.cg, step.to_dict()) == []


def test_finned_x_wing() -> None:
    # Rows 2 and 6 hold 4 in columns 3 and 8, row 2 also in r2c9 (the fin, box 3): r1c8 and r3c8
    # see the fin and lie in column 8.
    p = Pencil().only(4, row(2), ["r2c3", "r2c8", "r2c9"]).only(4, row(6), ["r6c3", "r6c8"])
    assert x_wing(p.cg) is None
    step = finned_x_wing(p.cg)
    assert step is not None
    assert step.technique == "Finned X-Wing"
    assert step.score == 130
    assert moves(step.eliminations) == {("r1c8", 4), ("r3c8", 4)}
    assert unjustified(p.cg, step.to_dict()) == []


def test_sashimi_x_wing() -> None:
    # Row 2: 4 only in r2c3 and r2c9 (fin); row 6: r6c3 and r6c8. Without the fin, row 2 keeps one
    # cell in the covers: sashimi.
    p = Pencil().only(4, row(2), ["r2c3", "r2c9"]).only(4, row(6), ["r6c3", "r6c8"])
    assert finned_x_wing(p.cg) is None
    step = sashimi_x_wing(p.cg)
    assert step is not None
    assert step.technique == "Sashimi X-Wing"
    assert step.score == 150
    assert moves(step.eliminations) == {("r1c8", 4), ("r3c8", 4)}
    assert unjustified(p.cg, step.to_dict()) == []


def test_finned_swordfish() -> None:
    p = (
        Pencil()
        .only(7, col(1), ["r2c1", "r4c1"])
        .only(7, col(5), ["r4c5", "r8c5"])
        .only(7, col(9), ["r2c9", "r8c9", "r9c9"])
    )
    step = finned_swordfish(p.cg)
    assert step is not None
    assert step.technique == "Finned Swordfish"
    assert step.score == 200
    assert moves(step.eliminations) == {("r8c7", 7), ("r8c8", 7)}
    assert unjustified(p.cg, step.to_dict()) == []


def test_aic_mixing_cells_and_houses() -> None:
    # 7 of row 1 in r1c1 or r1c5; r1c5 holds 3/7; 3 of column 5 in r1c5 or r6c5; r6c5 holds 3/8;
    # 8 of row 6 in r6c5 or r6c1. If r1c1 is not 7, the chain ends with r6c1 = 8.
    p = (
        Pencil()
        .only(7, row(1), ["r1c1", "r1c5"])
        .set("r1c5", (3, 7))
        .only(3, col(5), ["r1c5", "r6c5"])
        .set("r6c5", (3, 8))
        .only(8, row(6), ["r6c5", "r6c1"])
        .set("r6c1", (7, 8))
    )
    step = aic(p.cg)
    assert step is not None
    assert step.technique == "AIC"
    assert step.score == 280
    # r1c1 and r6c1 see each other: r6c1 cannot be 7 and r1c1 cannot be 8.
    assert moves(step.eliminations) == {("r6c1", 7), ("r1c1", 8)}
    assert step.explanation == (
        "If r1c1 is not 7, then r1c5 is 7, r1c5 is not 3, r6c5 is 3, r6c5 is not 8 and r6c1 is 8; "
        "so r1c1 holds 7 or r6c1 holds 8: remove 7 from r6c1; 8 from r1c1."
    )
    assert unjustified(p.cg, step.to_dict()) == []


def test_grouped_aic() -> None:
    # 6 of box 1 lies in r1c1/r1c2/r1c3 or r3c1 (a group and a cell); 6 of row 4 in r4c1 or r4c7.
    # If 6 is not in the group, r3c1 is 6, so r4c1 is not, so r4c7 is: r1c7 sees the group and r4c7.
    p = Pencil().only(6, box(1), ["r1c1", "r1c2", "r1c3", "r3c1"]).only(6, row(4), ["r4c1", "r4c7"])
    assert aic(p.cg) is None
    step = grouped_aic(p.cg)
    assert step is not None
    assert step.technique == "Grouped AIC"
    assert step.score == 300
    assert ("r1c7", 6) in moves(step.eliminations)
    assert unjustified(p.cg, step.to_dict()) == []


def test_continuous_nice_loop_takes_every_weak_link() -> None:
    # r1c1 (1/2) - r1c5 (2/3) - r5c5 (3/4) - r5c1 (4/1) closes on itself: each cell's two digits are
    # strongly linked, and the weak links between the cells (2 in row 1, 3 in column 5, 4 in row 5,
    # 1 in column 1) each have exactly one true end, so the rest of those houses lose those digits.
    p = Pencil().set("r1c1", (1, 2)).set("r1c5", (2, 3)).set("r5c5", (3, 4)).set("r5c1", (1, 4))
    step = aic(p.cg)
    assert step is not None
    assert step.technique == "Continuous Nice Loop"
    assert step.score == 280
    expected = (
        {(f"r1c{c}", 2) for c in range(1, 10) if c not in (1, 5)}
        | {(f"r{r}c5", 3) for r in range(1, 10) if r not in (1, 5)}
        | {(f"r5c{c}", 4) for c in range(1, 10) if c not in (1, 5)}
        | {(f"r{r}c1", 1) for r in range(1, 10) if r not in (1, 5)}
    )
    assert moves(step.eliminations) == expected
    assert set(step.to_dict()["cells"]) == {"r1c1", "r1c5", "r5c5", "r5c1"}  # type: ignore[arg-type]
    assert step.explanation.startswith("The loop ")
    assert unjustified(p.cg, step.to_dict()) == []
