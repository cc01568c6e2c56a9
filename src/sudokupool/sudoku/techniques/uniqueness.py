"""Uniqueness techniques: Unique Rectangles (types 1-4), Hidden Rectangle and BUG+1.

They rely on the puzzle having one solution. Four unfilled cells at the corners of a rectangle
that spans two rows, two columns and exactly two boxes must not end up holding only two digits a/b:
such a "deadly pattern" could be swapped (a for b) into a second solution. So any candidate whose
truth would leave the rectangle deadly is false. BUG+1 is the same idea for the whole grid: when
every unfilled cell but one has two candidates, the extra cell must hold the digit that would
otherwise appear three times in its houses.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates, common_peers
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSES, ROW_OF, cell_name, house_name
from sudokupool.sudoku.techniques.step import Step, digit_list, names, removal_text

Rectangle = tuple[int, int, int, int]  # (a, b, c, d): a-b and c-d share a row, a-c and b-d a column


_last: list[object] = [None, []]


def _rectangles(cg: Candidates) -> list[tuple[Rectangle, int, int]]:
    """Every rectangle of unfilled cells in two boxes, with each pair of digits all four corners hold
    (kept for the last candidate state: the uniqueness tests run one after another on it)."""
    key = tuple(cg.cands)
    if _last[0] != key:
        _last[0] = key
        _last[1] = list(_find_rectangles(cg))
    found = _last[1]
    assert isinstance(found, list)
    return found


# Every rectangle of cells spanning two rows, two columns and exactly two boxes, in the order the
# search tries them.
_ALL_RECTANGLES: tuple[Rectangle, ...] = tuple(
    (r1 * 9 + c1, r1 * 9 + c2, r2 * 9 + c1, r2 * 9 + c2)
    for r1, r2 in combinations(range(9), 2)
    for c1, c2 in combinations(range(9), 2)
    if (r1 // 3 == r2 // 3) != (c1 // 3 == c2 // 3)
)


def _find_rectangles(cg: Candidates) -> Iterator[tuple[Rectangle, int, int]]:
    cands = cg.cands
    for rect in _ALL_RECTANGLES:
        a, b, c, d = rect
        # A filled cell has no candidates, so a rectangle with one has no common digit.
        common = cands[a] & cands[b] & cands[c] & cands[d]
        if POPCOUNT[common] < 2:
            continue
        for x, y in combinations(DIGITS_OF[common], 2):
            yield rect, x, y


def _shared_houses(a: int, b: int) -> list[int]:
    houses = []
    if ROW_OF[a] == ROW_OF[b]:
        houses.append(ROW_OF[a])
    if COL_OF[a] == COL_OF[b]:
        houses.append(9 + COL_OF[a])
    if BOX_OF[a] == BOX_OF[b]:
        houses.append(18 + BOX_OF[a])
    return houses


def _diagonal(rect: Rectangle, cell: int) -> int:
    return rect[3 - rect.index(cell)]


def _step(
    kind: str, rect: Rectangle, x: int, y: int, elim: list[tuple[int, int]], why: str, **extra: list[int]
) -> Step:
    corners = names(rect)
    return Step(
        kind,
        eliminations=elim,
        cells=list(rect) + extra.get("cells", []),
        houses=extra.get("houses", []),
        digits=[x, y, *extra.get("digits", [])],
        explanation=f"{corners} would be a deadly pattern if they held only {x}/{y} (the two digits could "
        f"swap, giving a second solution); {why}: remove {removal_text(elim)}.",
    )


def unique_rectangle(cg: Candidates, kind: int) -> Step | None:
    cands = cg.cands
    for rect, x, y in _rectangles(cg):
        pair = BIT[x] | BIT[y]
        floor = [c for c in rect if cands[c] == pair]
        roof = [c for c in rect if cands[c] != pair]
        if kind == 1 and len(floor) == 3:
            (target,) = roof
            elim = [(target, x), (target, y)]
            return _step(
                "Uniqueness Test 1", rect, x, y, elim, f"three corners hold only {x}/{y}, so {cell_name(target)} is not"
            )
        if len(floor) != 2 or len(roof) != 2 or _diagonal(rect, floor[0]) == floor[1]:
            continue
        a, b = roof
        extra_a, extra_b = cands[a] & ~pair, cands[b] & ~pair
        if kind == 2 and extra_a == extra_b and POPCOUNT[extra_a] == 1:
            (z,) = DIGITS_OF[extra_a]
            elim = [(c, z) for c in sorted(common_peers(a, b)) if cands[c] & extra_a]
            if elim:
                return _step(
                    "Uniqueness Test 2",
                    rect,
                    x,
                    y,
                    elim,
                    f"so {cell_name(a)} or {cell_name(b)} is {z}",
                    digits=[z],
                )
        if kind == 3:
            step = _type3(cg, rect, x, y, a, b)
            if step is not None:
                return step
        if kind == 4:
            for house in _shared_houses(a, b):
                for keep, drop in ((x, y), (y, x)):
                    if [c for c in HOUSES[house] if cands[c] & BIT[keep]] == sorted((a, b)):
                        elim = [(a, drop), (b, drop)]
                        return _step(
                            "Uniqueness Test 4",
                            rect,
                            x,
                            y,
                            elim,
                            f"in {house_name(house)} {keep} fits only in {cell_name(a)} and {cell_name(b)}, so one of "
                            f"them is {keep} and neither can be {drop}",
                            houses=[house],
                        )
    return None


def _type3(cg: Candidates, rect: Rectangle, x: int, y: int, a: int, b: int) -> Step | None:
    """The roof's extra digits act as one cell; with k more cells of a shared house they form a naked
    subset of k + 1 digits, which the rest of that house loses."""
    cands = cg.cands
    pair = BIT[x] | BIT[y]
    extra = (cands[a] | cands[b]) & ~pair
    if POPCOUNT[extra] < 2:
        return None
    for house in _shared_houses(a, b):
        others = [c for c in HOUSES[house] if cands[c] and c not in (a, b)]
        for k in range(1, 4):
            for subset in combinations(others, k):
                union = extra
                for c in subset:
                    union |= cands[c]
                if POPCOUNT[union] != k + 1:
                    continue
                elim = [(c, d) for c in others if c not in subset for d in DIGITS_OF[cands[c] & union]]
                if elim:
                    return _step(
                        "Uniqueness Test 3",
                        rect,
                        x,
                        y,
                        elim,
                        f"so {cell_name(a)} or {cell_name(b)} holds one of {digit_list(DIGITS_OF[extra])}, and with "
                        f"{names(subset)} they lock {digit_list(DIGITS_OF[union])} in {house_name(house)}",
                        cells=list(subset),
                        houses=[house],
                    )
    return None


def uniqueness_1(cg: Candidates) -> Step | None:
    return unique_rectangle(cg, 1)


def uniqueness_2(cg: Candidates) -> Step | None:
    return unique_rectangle(cg, 2)


def uniqueness_3(cg: Candidates) -> Step | None:
    return unique_rectangle(cg, 3)


def uniqueness_4(cg: Candidates) -> Step | None:
    return unique_rectangle(cg, 4)


def hidden_rectangle(cg: Candidates) -> Step | None:
    """One corner holds only x/y; if the opposite corner's row and column each have x only in the
    rectangle, the opposite corner cannot be y (the rest of the rectangle would be forced deadly)."""
    cands = cg.cands
    for rect, x, y in _rectangles(cg):
        pair = BIT[x] | BIT[y]
        for corner in rect:
            if cands[corner] != pair:
                continue
            far = _diagonal(rect, corner)
            row_mate = next(c for c in rect if c != far and ROW_OF[c] == ROW_OF[far])
            col_mate = next(c for c in rect if c != far and COL_OF[c] == COL_OF[far])
            row, col = ROW_OF[far], 9 + COL_OF[far]
            for keep, drop in ((x, y), (y, x)):
                bit = BIT[keep]
                in_row = [c for c in HOUSES[row] if cands[c] & bit]
                in_col = [c for c in HOUSES[col] if cands[c] & bit]
                if sorted(in_row) == sorted((far, row_mate)) and sorted(in_col) == sorted((far, col_mate)):
                    elim = [(far, drop)]
                    ordered = (corner, row_mate, col_mate, far)
                    return Step(
                        "Hidden Rectangle",
                        eliminations=elim,
                        cells=[*rect],
                        houses=[row, col],
                        digits=[x, y],
                        explanation=f"{names(ordered)} would be a deadly pattern if they held only {x}/{y}; "
                        f"{cell_name(corner)} holds only {x}/{y} and {keep} has only two places in {house_name(row)} "
                        f"and in {house_name(col)}, so if {cell_name(far)} were {drop} the rectangle would be forced "
                        f"deadly: remove {removal_text(elim)}.",
                    )
    return None


def bug_plus_1(cg: Candidates) -> Step | None:
    """Bivalue Universal Grave + 1: every unfilled cell but one holds two candidates."""
    cands = cg.cands
    extra = None
    for cell in cg.empty_cells():
        n = POPCOUNT[cands[cell]]
        if n == 2:
            continue
        if n != 3 or extra is not None:
            return None
        extra = cell
    if extra is None:
        return None
    for digit in DIGITS_OF[cands[extra]]:
        bit = BIT[digit]
        counts = [
            sum(1 for c in HOUSES[h] if cands[c] & bit) for h in (ROW_OF[extra], 9 + COL_OF[extra], 18 + BOX_OF[extra])
        ]
        if counts != [3, 3, 3]:
            continue
        trial = list(cands)
        trial[extra] &= ~bit
        if all(sum(1 for c in house if trial[c] & BIT[d]) in (0, 2) for house in HOUSES for d in range(1, 10)):
            return Step(
                "Bivalue Universal Grave + 1",
                placements=[(extra, digit)],
                cells=[extra],
                digits=[digit],
                explanation=f"Every unfilled cell but {cell_name(extra)} holds two candidates, and {digit} appears "
                f"three times in its row, column and box; without {digit} there the grid would be a deadly BUG with "
                f"no single solution, so {cell_name(extra)} = {digit}.",
            )
    return None
