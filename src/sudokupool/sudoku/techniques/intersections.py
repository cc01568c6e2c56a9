"""Locked Candidates: where a box and a line meet, a digit confined to the overlap.

Type 1 (Pointing): in a box, a digit's candidates all lie in one row or column, so the rest of
that line cannot hold it. Type 2 (Claiming): in a row or column, a digit's candidates all lie in
one box, so the rest of that box cannot hold it.
"""

from __future__ import annotations

from sudokupool.sudoku.candidates import BIT, Candidates
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSES, ROW_OF, house_name
from sudokupool.sudoku.techniques.step import Step, names, removal_text

POINTING = "Locked Candidates Type 1 (Pointing)"
CLAIMING = "Locked Candidates Type 2 (Claiming)"


def _locked(
    technique: str, digit: int, cells: list[int], house: int, overlap: int, elim: list[tuple[int, int]]
) -> Step:
    """The step: ``cells``, the places of ``digit`` in ``house``, all lie in ``overlap`` too, so ``elim``, the
    rest of ``overlap``'s ``digit``, goes."""
    return Step(
        technique,
        eliminations=elim,
        cells=cells,
        houses=[house, overlap],
        digits=[digit],
        explanation=f"In {house_name(house)}, {digit} can only go in {house_name(overlap)} "
        f"({names(cells)}), so remove {removal_text(elim)}.",
    )


def pointing(cg: Candidates) -> Step | None:
    cands = cg.cands
    for box in range(18, 27):
        for digit in range(1, 10):
            bit = BIT[digit]
            cells = [c for c in HOUSES[box] if cands[c] & bit]
            if len(cells) < 2:
                continue
            for line in ({ROW_OF[c] for c in cells}, {9 + COL_OF[c] for c in cells}):
                if len(line) != 1:
                    continue
                (h,) = line
                elim = [(c, digit) for c in HOUSES[h] if cands[c] & bit and c not in cells]
                if elim:
                    return _locked(POINTING, digit, cells, box, h, elim)
    return None


def claiming(cg: Candidates) -> Step | None:
    cands = cg.cands
    for h in range(18):
        for digit in range(1, 10):
            bit = BIT[digit]
            cells = [c for c in HOUSES[h] if cands[c] & bit]
            if len(cells) < 2:
                continue
            boxes = {BOX_OF[c] for c in cells}
            if len(boxes) != 1:
                continue
            box = 18 + boxes.pop()
            elim = [(c, digit) for c in HOUSES[box] if cands[c] & bit and c not in cells]
            if elim:
                return _locked(CLAIMING, digit, cells, h, box, elim)
    return None
