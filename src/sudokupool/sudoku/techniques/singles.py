"""Singles: Full House, Naked Single and Hidden Single, the techniques that place digits.

These run on every step of every puzzle, so they scan the raw masks directly.
"""

from __future__ import annotations

from sudokupool.sudoku.candidates import DIGIT_OF_BIT, PEER_LISTS, Candidates
from sudokupool.sudoku.grid import HOUSES, cell_name, house_name
from sudokupool.sudoku.techniques.step import Step, capitalised_house

# Players scan boxes first, then rows, then columns.
_HIDDEN_ORDER = tuple(range(18, 27)) + tuple(range(0, 18))


def full_house(cg: Candidates) -> Step | None:
    """A house with one empty cell left: that cell takes the house's missing digit."""
    values = cg.values
    for h, house in enumerate(HOUSES):
        empty = -1
        for c in house:
            if values[c] == 0:
                if empty >= 0:
                    break
                empty = c
        else:
            if empty >= 0:
                digit = DIGIT_OF_BIT.get(cg.cands[empty], 0)
                if digit:
                    name = cell_name(empty)
                    return Step(
                        "Full House",
                        placements=[(empty, digit)],
                        cells=[empty],
                        houses=[h],
                        digits=[digit],
                        explanation=f"{capitalised_house(h)} has only {name} left empty and misses only {digit}, "
                        f"so {name} = {digit}.",
                    )
    return None


def naked_single(cg: Candidates) -> Step | None:
    """A cell with one candidate left takes it."""
    values = cg.values
    for cell, mask in enumerate(cg.cands):
        if mask and values[cell] == 0 and not mask & (mask - 1):
            digit = DIGIT_OF_BIT[mask]
            name = cell_name(cell)
            seen = {values[p] for p in PEER_LISTS[cell]}
            if len(seen - {0}) == 8:
                why = f"The row, column and box of {name} already hold every digit except {digit}"
            else:
                why = f"After the earlier eliminations, {digit} is the only candidate left in {name}"
            return Step(
                "Naked Single",
                placements=[(cell, digit)],
                cells=[cell],
                digits=[digit],
                explanation=f"{why}, so {name} = {digit}.",
            )
    return None


def hidden_single(cg: Candidates) -> Step | None:
    """A digit with one place left in a house goes there."""
    cands = cg.cands
    for h in _HIDDEN_ORDER:
        house = HOUSES[h]
        once = twice = 0
        for c in house:
            m = cands[c]
            twice |= once & m
            once |= m
        unique = once & ~twice
        if unique:
            bit = unique & -unique
            digit = DIGIT_OF_BIT[bit]
            cell = next(c for c in house if cands[c] & bit)
            name = cell_name(cell)
            return Step(
                "Hidden Single",
                placements=[(cell, digit)],
                cells=[cell],
                houses=[h],
                digits=[digit],
                explanation=f"In {house_name(h)}, {digit} fits only in {name}, so {name} = {digit}.",
            )
    return None
