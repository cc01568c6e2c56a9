"""Sue de Coq: two or three cells where a line crosses a box, locked together with cells of each.

Take N unfilled cells C where a row (or column) crosses a box, holding N + 2 or more digits V between
them. Add cells L from the rest of the line and cells B from the rest of the box such that L's
digits and B's digits have none in common and all the cells, C, L and B, hold exactly as many digits
as there are cells. Then no digit can appear twice among them: one of L's digits is only in the line
(in L or C), one of B's only in the box, and a digit of V in neither only in C. With as many digits
as cells, each digit is there exactly once, so the rest of the line loses L's digits and V's digits
outside B's, and the rest of the box loses B's digits and V's digits outside L's.
"""

from __future__ import annotations

from itertools import combinations

from sudokupool.sudoku.candidates import DIGITS_OF, POPCOUNT, Candidates
from sudokupool.sudoku.grid import BOX_OF, HOUSES, house_name
from sudokupool.sudoku.techniques.memo import kept, remember
from sudokupool.sudoku.techniques.step import Step, digit_list, names, removal_text

MAX_SIDE = 4  # cells taken from the rest of the line, and from the rest of the box
_cache: dict[tuple[int, ...], Step | None] = kept({})

# (box, line) pairs that cross: each box with its three rows and three columns.
_CROSSINGS = tuple(
    (box, line)
    for box in range(9)
    for line in sorted({c // 9 for c in HOUSES[18 + box]} | {9 + c % 9 for c in HOUSES[18 + box]})
)


def _options(cells: list[int], cands: list[int]) -> list[tuple[tuple[int, ...], int]]:
    """Every set of up to :data:`MAX_SIDE` of ``cells`` with the union of their candidates."""
    out = []
    for size in range(1, min(MAX_SIDE, len(cells)) + 1):
        for combo in combinations(cells, size):
            union = 0
            for c in combo:
                union |= cands[c]
            out.append((combo, union))
    return out


def _in_crossing(cg: Candidates, box: int, line: int) -> Step | None:
    cands = cg.cands
    line_cells = HOUSES[line]
    box_cells = HOUSES[18 + box]
    crossing = [c for c in line_cells if BOX_OF[c] == box and cands[c]]
    if len(crossing) < 2:
        return None
    line_rest = [c for c in line_cells if BOX_OF[c] != box and cands[c]]
    box_rest = [c for c in box_cells if c not in line_cells and cands[c]]
    line_options = _options(line_rest, cands)
    box_options = _options(box_rest, cands)
    for n in (2, 3):
        for core in combinations(crossing, n):
            v = 0
            for c in core:
                v |= cands[c]
            spare = POPCOUNT[v] - n
            if spare < 2:
                continue
            # A side's share: its cells minus its digits outside V; the two shares must add up to spare.
            lines = [(cs, u, len(cs) - POPCOUNT[u & ~v]) for cs, u in line_options if u & v]
            boxes = [(cs, u, len(cs) - POPCOUNT[u & ~v]) for cs, u in box_options if u & v]
            for l_cells, vl, share_l in lines:
                if not 1 <= share_l < spare:
                    continue
                for b_cells, vb, share_b in boxes:
                    if share_b != spare - share_l or vl & vb:
                        continue
                    used = set(core) | set(l_cells) | set(b_cells)
                    from_line = (vl | v) & ~vb
                    from_box = (vb | v) & ~vl
                    elim = [(c, d) for c in line_cells if c not in used for d in DIGITS_OF[cands[c] & from_line]]
                    elim += [
                        (c, d)
                        for c in box_cells
                        if c not in used
                        for d in DIGITS_OF[cands[c] & from_box]
                        if (c, d) not in elim
                    ]
                    if not elim:
                        continue
                    total = DIGITS_OF[v | vl | vb]
                    return Step(
                        "Sue de Coq",
                        eliminations=elim,
                        cells=[*core, *l_cells, *b_cells],
                        houses=[line, 18 + box],
                        digits=list(total),
                        explanation=f"Where {house_name(line)} crosses {house_name(18 + box)}, {names(core)} hold "
                        f"{digit_list(DIGITS_OF[v])}; with {names(l_cells)} ({digit_list(DIGITS_OF[vl])}) in the "
                        f"{house_name(line).split()[0]} and {names(b_cells)} ({digit_list(DIGITS_OF[vb])}) in the box, "
                        f"{len(used)} cells hold {len(total)} digits and none can repeat, so each is there once: "
                        f"remove {removal_text(elim)}.",
                    )
    return None


def sue_de_coq(cg: Candidates) -> Step | None:
    """The first Sue de Coq, boxes in order and each box's rows before its columns."""
    cands = cg.cands
    for box, line in _CROSSINGS:
        key = (box, line, *(cands[c] for c in HOUSES[line]), *(cands[c] for c in HOUSES[18 + box]))
        step = _cache[key] if key in _cache else remember(_cache, key, _in_crossing(cg, box, line))
        if step is not None:
            return step
    return None
