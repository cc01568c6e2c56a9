from __future__ import annotations

from pencil import Pencil, box, moves, row

from sudokupool.sudoku.techniques.intersections import claiming, pointing


def test_pointing_clears_the_rest_of_the_row() -> None:
    p = Pencil().only(5, box(1), ["r1c1", "r1c2"])
    step = pointing(p.cg)
    assert step is not None
    assert step.technique == "Locked Candidates Type 1 (Pointing)"
    assert moves(step.eliminations) == {(f"r1c{c}", 5) for c in range(4, 10)}
    assert step.to_dict()["houses"] == ["box 1", "row 1"]
    assert step.placements == []


def test_claiming_clears_the_rest_of_the_box() -> None:
    p = Pencil().only(5, row(1), ["r1c1", "r1c2"])
    step = claiming(p.cg)
    assert step is not None
    assert step.technique == "Locked Candidates Type 2 (Claiming)"
    assert moves(step.eliminations) == {(f"r{r}c{c}", 5) for r in (2, 3) for c in (1, 2, 3)}
    assert step.to_dict()["houses"] == ["row 1", "box 1"]


def test_no_locked_candidates_without_an_effect() -> None:
    # 5 confined to row 1 within box 1, and row 1 already free of 5 elsewhere: nothing to remove.
    p = Pencil().only(5, box(1), ["r1c1", "r1c2"]).only(5, row(1), ["r1c1", "r1c2"])
    assert pointing(p.cg) is None
    assert claiming(p.cg) is None
