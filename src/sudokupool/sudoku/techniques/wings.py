"""Wings: XY-Wing, XYZ-Wing and W-Wing, small patterns of bivalue cells.

Each proves that at least one of two or three cells holds a digit z, so any cell seeing all of
them loses z.
"""

from __future__ import annotations

from sudokupool.sudoku.candidates import DIGITS_OF, POPCOUNT, Candidates, common_peers
from sudokupool.sudoku.grid import PEERS, cell_name, house_name
from sudokupool.sudoku.techniques.single_digit import strong_links
from sudokupool.sudoku.techniques.step import Step, digit_list, removal_text


def _cells_with(cg: Candidates, size: int) -> list[int]:
    return [c for c, m in enumerate(cg.cands) if POPCOUNT[m] == size]


def xy_wing(cg: Candidates) -> Step | None:
    """Pivot xy sees pincers xz and yz: whichever of x, y the pivot takes, a pincer is z."""
    cands = cg.cands
    bivalue = _cells_with(cg, 2)
    for pivot in bivalue:
        pm = cands[pivot]
        wings = [c for c in bivalue if c in PEERS[pivot] and POPCOUNT[cands[c] & pm] == 1]
        for i, q in enumerate(wings):
            for r in wings[i + 1 :]:
                qm, rm = cands[q], cands[r]
                z_mask = qm & rm & ~pm
                if not z_mask or (qm & pm) == (rm & pm):
                    continue
                (z,) = DIGITS_OF[z_mask]
                elim = [(c, z) for c in sorted(common_peers(q, r)) if cands[c] & z_mask]
                if elim:
                    x, y = DIGITS_OF[pm]
                    return Step(
                        "XY-Wing",
                        eliminations=elim,
                        cells=[pivot, q, r],
                        digits=[x, y, z],
                        explanation=f"{cell_name(pivot)} is {x} or {y}, and either way one of {cell_name(q)} "
                        f"({digit_list(DIGITS_OF[qm])}) and {cell_name(r)} ({digit_list(DIGITS_OF[rm])}) is {z}: "
                        f"remove {removal_text(elim)}.",
                    )
    return None


def xyz_wing(cg: Candidates) -> Step | None:
    """Pivot xyz sees pincers xz and yz: one of the three cells is z."""
    cands = cg.cands
    bivalue = _cells_with(cg, 2)
    for pivot in _cells_with(cg, 3):
        pm = cands[pivot]
        wings = [c for c in bivalue if c in PEERS[pivot] and cands[c] & pm == cands[c]]
        for i, q in enumerate(wings):
            for r in wings[i + 1 :]:
                qm, rm = cands[q], cands[r]
                if qm == rm:
                    continue
                z_mask = qm & rm
                (z,) = DIGITS_OF[z_mask]
                elim = [(c, z) for c in sorted(common_peers(pivot, q, r)) if cands[c] & z_mask]
                if elim:
                    return Step(
                        "XYZ-Wing",
                        eliminations=elim,
                        cells=[pivot, q, r],
                        digits=list(DIGITS_OF[pm]),
                        explanation=f"{cell_name(pivot)} ({digit_list(DIGITS_OF[pm])}) sees {cell_name(q)} "
                        f"({digit_list(DIGITS_OF[qm])}) and {cell_name(r)} ({digit_list(DIGITS_OF[rm])}), so one of "
                        f"the three is {z}: remove {removal_text(elim)}.",
                    )
    return None


def w_wing(cg: Candidates) -> Step | None:
    """Two xy cells joined by a strong link on x (each end sees one of them): one of them is y."""
    cands = cg.cands
    bivalue = _cells_with(cg, 2)
    links_by_digit = {d: strong_links(cg, d) for d in range(1, 10)}
    for i, a in enumerate(bivalue):
        for b in bivalue[i + 1 :]:
            if cands[a] != cands[b] or b in PEERS[a]:
                continue
            pair = DIGITS_OF[cands[a]]
            for x, y in (pair, pair[::-1]):
                elim = [(c, y) for c in sorted(common_peers(a, b)) if cg.has(c, y)]
                if not elim:
                    continue
                for h, s1, s2 in links_by_digit[x]:
                    if {s1, s2} & {a, b}:
                        continue
                    for e1, e2 in ((s1, s2), (s2, s1)):
                        if e1 in PEERS[a] and e2 in PEERS[b]:
                            return Step(
                                "W-Wing",
                                eliminations=elim,
                                cells=[a, b, e1, e2],
                                houses=[h],
                                digits=[x, y],
                                explanation=f"{cell_name(a)} and {cell_name(b)} both hold only {x}/{y}; the {x} of "
                                f"{house_name(h)} goes in {cell_name(e1)} or {cell_name(e2)}, which see them, "
                                f"so one of them is {y}: remove {removal_text(elim)}.",
                            )
    return None
