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
                    return Step(
                        POINTING,
                        eliminations=elim,
                        cells=cells,
                        houses=[box, h],
                        digits=[digit],
                        explanation=f"In {house_name(box)}, {digit} can only go in {house_name(h)} "
                        f"({names(cells)}), so remove {removal_text(elim)}.",
                    )
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
                return Step(
                    CLAIMING,
                    eliminations=elim,
                    cells=cells,
                    houses=[h, box],
                    digits=[digit],
                    explanation=f"In {house_name(h)}, {digit} can only go in {house_name(box)} "
                    f"({names(cells)}), so remove {removal_text(elim)}.",
                )
    return None
