"""Single-digit patterns made of two strong links joined by a weak one: Skyscraper, 2-String Kite
and (the general case) Turbot Fish.

A strong link is a house where a digit has exactly two places, so one of them holds it. With
strong links A=B and C=D where B sees C, B and C cannot both hold the digit, so A or D does: any
cell seeing both A and D loses the digit.
"""

from __future__ import annotations

from collections.abc import Iterator

from sudokupool.sudoku.candidates import BIT, Candidates, common_peers
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSE_MASK, HOUSES, PEERS, ROW_OF, cell_name, house_name
from sudokupool.sudoku.techniques.memo import by_digit, digit_masks
from sudokupool.sudoku.techniques.step import Step, removal_text

StrongLink = tuple[int, int, int]  # (house, cell, cell)


def strong_links(cg: Candidates, digit: int) -> list[StrongLink]:
    """Every house where ``digit`` has exactly two candidate cells."""
    places = digit_masks(cg)[digit]
    links = []
    for h in range(27):
        cells = places & HOUSE_MASK[h]
        if cells.bit_count() == 2:
            low = cells & -cells
            links.append((h, low.bit_length() - 1, (cells ^ low).bit_length() - 1))
    return links


def _patterns(cg: Candidates, digit: int) -> Iterator[tuple[str, int, StrongLink, StrongLink, int, int, int, int]]:
    """(kind, digit, link1, link2, a, b, c, d) for strong links a=b, c=d of ``digit`` with b seeing c."""
    links = strong_links(cg, digit)
    for i, first in enumerate(links):
        for second in links[i + 1 :]:
            for a, b in ((first[1], first[2]), (first[2], first[1])):
                for c, d in ((second[1], second[2]), (second[2], second[1])):
                    if len({a, b, c, d}) != 4 or c not in PEERS[b]:
                        continue
                    yield _kind(first[0], second[0], a, b, c, d), digit, first, second, a, b, c, d


def _kind(h1: int, h2: int, a: int, b: int, c: int, d: int) -> str:
    rows = h1 < 9 and h2 < 9
    cols = 9 <= h1 < 18 and 9 <= h2 < 18
    if (rows and COL_OF[b] == COL_OF[c]) or (cols and ROW_OF[b] == ROW_OF[c]):
        return "Skyscraper"
    mixed = (h1 < 9 and 9 <= h2 < 18) or (h2 < 9 and 9 <= h1 < 18)
    box = BOX_OF[b]
    if mixed and BOX_OF[c] == box and BOX_OF[a] != box and BOX_OF[d] != box:
        return "2-String Kite"
    return "Turbot Fish"


def _find(cg: Candidates, wanted: str, digit: int) -> Step | None:
    cands = cg.cands
    for kind, _, first, second, a, b, c, d in _patterns(cg, digit):
        if kind != wanted:
            continue
        bit = BIT[digit]
        elim = [(x, digit) for x in sorted(common_peers(a, d)) if cands[x] & bit]
        if not elim:
            continue
        na, nb, nc, nd = (cell_name(x) for x in (a, b, c, d))
        return Step(
            kind,
            eliminations=elim,
            cells=[a, b, c, d],
            houses=[first[0], second[0]],
            digits=[digit],
            explanation=f"{digit} is in {na} or {nb} ({house_name(first[0])}) and in {nc} or {nd} "
            f"({house_name(second[0])}); {nb} and {nc} see each other, so {na} or {nd} is {digit}: "
            f"remove {removal_text(elim)}.",
        )
    return None


@by_digit
def skyscraper(cg: Candidates, digit: int) -> Step | None:
    return _find(cg, "Skyscraper", digit)


@by_digit
def two_string_kite(cg: Candidates, digit: int) -> Step | None:
    return _find(cg, "2-String Kite", digit)


@by_digit
def turbot_fish(cg: Candidates, digit: int) -> Step | None:
    return _find(cg, "Turbot Fish", digit)


@by_digit
def empty_rectangle(cg: Candidates, digit: int) -> Step | None:
    """A box whose candidates for a digit all lie on one row and one column through it (the empty
    rectangle), and a strong link outside the box with one end on that row (or column): if that end
    is not the digit, the other end is; if it is, the box's digit is in the column (row). Either way
    the cell where the other end's line crosses the box's column (row) loses the digit."""
    cands = cg.cands
    bit = BIT[digit]
    links = strong_links(cg, digit)
    for box in range(9):
        spots = [c for c in HOUSES[18 + box] if cands[c] & bit]
        if len(spots) < 3:
            continue  # two spots make a Skyscraper, Kite or Turbot Fish instead
        rows = {ROW_OF[c] for c in spots}
        cols = {COL_OF[c] for c in spots}
        for r in rows:
            for c in cols:
                if any(ROW_OF[x] != r and COL_OF[x] != c for x in spots):
                    continue
                if all(ROW_OF[x] == r for x in spots) or all(COL_OF[x] == c for x in spots):
                    continue  # all in one line: Locked Candidates
                for house, p, q in links:
                    for near, far in ((p, q), (q, p)):
                        if 9 <= house < 18 and ROW_OF[near] == r and BOX_OF[near] != box and BOX_OF[far] != box:
                            target = ROW_OF[far] * 9 + c
                        elif house < 9 and COL_OF[near] == c and BOX_OF[near] != box and BOX_OF[far] != box:
                            target = r * 9 + COL_OF[far]
                        else:
                            continue
                        if BOX_OF[target] == box or not cands[target] & bit or target in (near, far):
                            continue
                        elim = [(target, digit)]
                        return Step(
                            "Empty Rectangle",
                            eliminations=elim,
                            cells=[*sorted(spots), near, far],
                            houses=[18 + box, house],
                            digits=[digit],
                            explanation=f"In box {box + 1}, {digit} lies only on row {r + 1} and column {c + 1}; "
                            f"{digit} is in {cell_name(near)} or {cell_name(far)} ({house_name(house)}), and "
                            f"either way {cell_name(target)} cannot be {digit} (if {cell_name(near)} is {digit}, "
                            f"the box's {digit} is on its other line): remove {removal_text(elim)}.",
                        )
    return None
