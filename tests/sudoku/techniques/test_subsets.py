from __future__ import annotations

import pytest
from pencil import Pencil, moves, row

from sudokupool.sudoku.techniques.subsets import hidden, naked


@pytest.mark.parametrize(
    ("size", "cells", "technique"),
    [
        pytest.param(2, {"r1c1": (3, 7), "r1c5": (3, 7)}, "Naked Pair", id="pair"),
        pytest.param(3, {"r1c1": (1, 2), "r1c5": (2, 3), "r1c9": (1, 3)}, "Naked Triple", id="triple"),
        pytest.param(
            4, {"r1c1": (1, 2), "r1c4": (2, 3), "r1c7": (3, 4), "r1c9": (1, 4)}, "Naked Quadruple", id="quadruple"
        ),
    ],
)
def test_naked_subset_in_a_row(size: int, cells: dict[str, tuple[int, ...]], technique: str) -> None:
    p = Pencil()
    for name, digits in cells.items():
        p.set(name, digits)
    step = naked(p.cg, size)
    assert step is not None
    assert step.technique == technique
    digits = sorted({d for ds in cells.values() for d in ds})
    others = [f"r1c{c}" for c in range(1, 10) if f"r1c{c}" not in cells]
    assert moves(step.eliminations) == {(name, d) for name in others for d in digits}
    assert step.digits == digits
    assert step.to_dict()["houses"] == ["row 1"]


@pytest.mark.parametrize(
    ("size", "digits", "cells", "technique"),
    [
        pytest.param(2, (3, 7), ["r1c1", "r1c5"], "Hidden Pair", id="pair"),
        pytest.param(3, (1, 2, 3), ["r1c1", "r1c5", "r1c9"], "Hidden Triple", id="triple"),
        pytest.param(4, (1, 2, 3, 4), ["r1c1", "r1c4", "r1c7", "r1c9"], "Hidden Quadruple", id="quadruple"),
    ],
)
def test_hidden_subset_in_a_row(size: int, digits: tuple[int, ...], cells: list[str], technique: str) -> None:
    p = Pencil()
    for d in digits:
        p.only(d, row(1), cells)
    step = hidden(p.cg, size)
    assert step is not None
    assert step.technique == technique
    others = [d for d in range(1, 10) if d not in digits]
    assert moves(step.eliminations) == {(name, d) for name in cells for d in others}
    assert sorted(step.to_dict()["cells"]) == sorted(cells)  # type: ignore[type-var]


def test_naked_pair_in_a_box_is_reported_in_the_box_first() -> None:
    p = Pencil().set("r1c1", (3, 7)).set("r2c2", (3, 7))
    step = naked(p.cg, 2)
    assert step is not None
    assert step.to_dict()["houses"] == ["box 1"]
    box_others = ["r1c2", "r1c3", "r2c1", "r2c3", "r3c1", "r3c2", "r3c3"]
    assert moves(step.eliminations) == {(n, d) for n in box_others for d in (3, 7)}


def test_no_subset_on_a_blank_grid() -> None:
    p = Pencil()
    for size in (2, 3, 4):
        assert naked(p.cg, size) is None
        assert hidden(p.cg, size) is None
