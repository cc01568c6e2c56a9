"""Basic fish: X-Wing, Swordfish and Jellyfish.

When a digit's candidates in n rows all lie in the same n columns, each of those columns gets
its copy of the digit from one of the n rows, so the columns' other cells lose the digit (and
the same with rows and columns swapped).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

from sudokupool.sudoku.candidates import BIT, POPCOUNT, Candidates
from sudokupool.sudoku.techniques.step import Step, join, removal_text

_NAMES = {2: "X-Wing", 3: "Swordfish", 4: "Jellyfish"}


def fish(cg: Candidates, size: int) -> Step | None:
    cands = cg.cands
    for digit in range(1, 10):
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
    def finder(cg: Candidates) -> Step | None:
        return fish(cg, size)

    finder.__name__ = _NAMES[size].lower().replace("-", "_")
    return finder


x_wing = _sized(2)
swordfish = _sized(3)
jellyfish = _sized(4)
