"""Fish: X-Wing, Swordfish and Jellyfish, plain, finned and sashimi.

When a digit's candidates in n rows all lie in the same n columns, each of those columns gets
its copy of the digit from one of the n rows, so the columns' other cells lose the digit (and
the same with rows and columns swapped).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

from sudokupool.sudoku.candidates import BIT, POPCOUNT, Candidates
from sudokupool.sudoku.grid import BOX_OF, cell_name
from sudokupool.sudoku.techniques.memo import by_digit, by_digit_pair
from sudokupool.sudoku.techniques.step import Step, join, names, removal_text

_NAMES = {2: "X-Wing", 3: "Swordfish", 4: "Jellyfish"}


def fish(cg: Candidates, size: int) -> Step | None:
    """The first basic fish of ``size`` lines, trying digits 1-9 in order."""
    for digit in range(1, 10):
        step = fish_digit(cg, size, digit)
        if step is not None:
            return step
    return None


def fish_digit(cg: Candidates, size: int, digit: int) -> Step | None:
    cands = cg.cands
    bit = BIT[digit]
    for by_rows in (True, False):
        # lines[i] is the mask of cross positions (columns for rows) holding the digit in line i.
        lines: list[int] = []
        for i in range(9):
            mask = 0
            for j in range(9):
                cell = i * 9 + j if by_rows else j * 9 + i
                if cands[cell] & bit:
                    mask |= 1 << j
            lines.append(mask)
        base_pool = [i for i in range(9) if 2 <= POPCOUNT[lines[i]] <= size]
        if len(base_pool) < size:
            continue
        for base in combinations(base_pool, size):
            cover = 0
            for i in base:
                cover |= lines[i]
            if POPCOUNT[cover] != size:
                continue
            covers = [j for j in range(9) if cover >> j & 1]
            elim = []
            for i in range(9):
                if i in base or not lines[i] & cover:
                    continue
                for j in covers:
                    if lines[i] >> j & 1:
                        elim.append((i * 9 + j if by_rows else j * 9 + i, digit))
            if not elim:
                continue
            cells = [i * 9 + j if by_rows else j * 9 + i for i in base for j in covers if lines[i] >> j & 1]
            base_kind, cover_kind = ("rows", "columns") if by_rows else ("columns", "rows")
            base_names = join([str(i + 1) for i in base])
            cover_names = join([str(j + 1) for j in covers])
            return Step(
                _NAMES[size],
                eliminations=elim,
                cells=sorted(cells),
                houses=[i if by_rows else 9 + i for i in base] + [9 + j if by_rows else j for j in covers],
                digits=[digit],
                explanation=f"In {base_kind} {base_names}, {digit} fits only in {cover_kind} {cover_names}, "
                f"so those {cover_kind} need their {digit} from these {base_kind}: remove {removal_text(elim)}.",
            )
    return None


def _sized(size: int) -> Callable[[Candidates], Step | None]:
    def find(cg: Candidates, digit: int) -> Step | None:
        return fish_digit(cg, size, digit)

    find.__name__ = _NAMES[size].lower().replace("-", "_")
    return by_digit(find)


x_wing = _sized(2)
swordfish = _sized(3)
jellyfish = _sized(4)


_FINNED = {2: "X-Wing", 3: "Swordfish", 4: "Jellyfish"}

# The cells of each row (by_rows) or column, in line order; and each 9-bit mask's bits, low first.
_LINE_CELLS = {
    True: tuple(tuple(i * 9 + j for j in range(9)) for i in range(9)),
    False: tuple(tuple(j * 9 + i for j in range(9)) for i in range(9)),
}
_BITS_OF = tuple(tuple(1 << j for j in range(9) if m >> j & 1) for m in range(512))


def finned_fish_digit(cg: Candidates, size: int, digit: int) -> tuple[Step | None, Step | None]:
    """The first finned and the first sashimi fish of ``size`` lines for ``digit``.

    A finned fish's base lines also hold the digit outside the cover lines ("fins"), all in one box.
    Either a fin holds the digit, or the fish does; so a cell in a cover line that also sees every
    fin (it lies in the fins' box) cannot. Sashimi: some base line has one cell left in the covers,
    so without its fins it would not even be a fish.
    """
    cands = cg.cands
    bit = BIT[digit]
    found: list[Step | None] = [None, None]  # finned, sashimi
    for by_rows in (True, False):

        def at(i: int, j: int, by_rows: bool = by_rows) -> int:
            return i * 9 + j if by_rows else j * 9 + i

        lines = []
        for cells in _LINE_CELLS[by_rows]:
            line = 0
            for j, c in enumerate(cells):
                if cands[c] & bit:
                    line |= 1 << j
            lines.append(line)
        pool = [i for i in range(9) if 1 <= POPCOUNT[lines[i]] <= size + 3]
        for base in combinations(pool, size):
            union = 0
            for i in base:
                union |= lines[i]
            if not size < POPCOUNT[union] <= size + 3:
                continue
            # The fins lie in one box, so every union line outside one stack of three is a cover.
            for stack in range(3):
                in_stack = 0b111 << (3 * stack)
                required = union & ~in_stack
                need = size - POPCOUNT[required]
                if need < 0:
                    continue
                for extra in combinations(_BITS_OF[union & in_stack], need):
                    cover = required | sum(extra)
                    fin_lines = [i for i in base if lines[i] & ~cover]
                    if not fin_lines or len({i // 3 for i in fin_lines}) != 1:
                        continue
                    inside = min(POPCOUNT[lines[i] & cover] for i in base)
                    if inside == 0:
                        continue
                    sashimi = inside == 1
                    if found[sashimi] is not None:
                        continue
                    band = fin_lines[0] // 3
                    elim = [
                        (at(i, j), digit)
                        for i in range(3 * band, 3 * band + 3)
                        if i not in base
                        for j in range(3 * stack, 3 * stack + 3)
                        if cover >> j & 1 and lines[i] >> j & 1
                    ]
                    if not elim:
                        continue
                    cover_lines = [j for j in range(9) if cover >> j & 1]
                    fins = [at(i, j) for i in fin_lines for j in range(9) if (lines[i] & ~cover) >> j & 1]
                    fin_box = BOX_OF[fins[0]]
                    body = [at(i, j) for i in base for j in cover_lines if lines[i] >> j & 1]
                    base_kind, cover_kind = ("rows", "columns") if by_rows else ("columns", "rows")
                    found[sashimi] = Step(
                        f"{'Sashimi' if sashimi else 'Finned'} {_FINNED[size]}",
                        eliminations=elim,
                        cells=sorted(body) + sorted(fins),
                        houses=[i if by_rows else 9 + i for i in base] + [9 + j if by_rows else j for j in cover_lines],
                        digits=[digit],
                        explanation=f"In {base_kind} {join([str(i + 1) for i in base])}, {digit} fits only in "
                        f"{cover_kind} {join([str(j + 1) for j in cover_lines])} apart from the fin"
                        f"{'s' if len(fins) > 1 else ''} {join([cell_name(f) for f in fins])} "
                        f"in box {fin_box + 1}: "
                        f"either a fin is {digit} or the fish is, and {names(c for c, _ in elim)} see"
                        f"{'s' if len(elim) == 1 else ''} both, so remove {removal_text(elim)}.",
                    )
                    if found[0] is not None and found[1] is not None:
                        return found[0], found[1]
    return found[0], found[1]


def _finned(size: int, sashimi: bool) -> Callable[[Candidates], Step | None]:
    # Finned and sashimi fish of one size come from one search; both answers are kept per digit.
    both = _BOTH.setdefault(size, by_digit_pair(lambda cg, digit: finned_fish_digit(cg, size, digit)))

    def find(cg: Candidates, digit: int) -> Step | None:
        return both(cg, digit)[sashimi]

    find.__name__ = f"{'sashimi' if sashimi else 'finned'}_{_FINNED[size].lower().replace('-', '_')}"
    return by_digit(find)


_BOTH: dict[int, Callable[[Candidates, int], tuple[Step | None, Step | None]]] = {}


finned_x_wing = _finned(2, False)
sashimi_x_wing = _finned(2, True)
finned_swordfish = _finned(3, False)
sashimi_swordfish = _finned(3, True)
finned_jellyfish = _finned(4, False)
sashimi_jellyfish = _finned(4, True)
