"""Naked and hidden subsets (pairs, triples, quadruples) inside one house.

Naked: n cells of a house hold only n digits between them, so those digits leave the house's
other cells. Hidden: n digits of a house fit only in n cells, so those cells drop every other digit.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates
from sudokupool.sudoku.grid import HOUSES, house_name
from sudokupool.sudoku.techniques.memo import by_house
from sudokupool.sudoku.techniques.step import Step, digit_list, names, removal_text

_NAKED = {2: "Naked Pair", 3: "Naked Triple", 4: "Naked Quadruple"}
_HIDDEN = {2: "Hidden Pair", 3: "Hidden Triple", 4: "Hidden Quadruple"}
# Boxes first, as a player would look.
_ORDER = tuple(range(18, 27)) + tuple(range(18))


def naked(cg: Candidates, size: int) -> Step | None:
    """The first naked subset of ``size`` cells, houses in :data:`_ORDER`."""
    for h in _ORDER:
        step = naked_in(cg, size, h)
        if step is not None:
            return step
    return None


def naked_in(cg: Candidates, size: int, h: int) -> Step | None:
    cands = cg.cands
    house = HOUSES[h]
    pool = [c for c in house if 2 <= POPCOUNT[cands[c]] <= size]
    if len(pool) < size:
        return None
    for combo in combinations(pool, size):
        union = 0
        for c in combo:
            union |= cands[c]
        if POPCOUNT[union] != size:
            continue
        elim = [(c, d) for c in house if c not in combo for d in DIGITS_OF[cands[c] & union]]
        if elim:
            digits = list(DIGITS_OF[union])
            return Step(
                _NAKED[size],
                eliminations=elim,
                cells=list(combo),
                houses=[h],
                digits=digits,
                explanation=f"In {house_name(h)}, {names(combo)} hold only {digit_list(digits)} between them, "
                f"so those digits go nowhere else in the house: remove {removal_text(elim)}.",
            )
    return None


def hidden(cg: Candidates, size: int) -> Step | None:
    """The first hidden subset of ``size`` digits, houses in :data:`_ORDER`."""
    for h in _ORDER:
        step = hidden_in(cg, size, h)
        if step is not None:
            return step
    return None


def hidden_in(cg: Candidates, size: int, h: int) -> Step | None:
    cands = cg.cands
    house = HOUSES[h]
    where: dict[int, list[int]] = {}
    for d in range(1, 10):
        bit = BIT[d]
        cells = [c for c in house if cands[c] & bit]
        if 2 <= len(cells) <= size:
            where[d] = cells
    if len(where) < size:
        return None
    for combo in combinations(where, size):
        spots = sorted({c for d in combo for c in where[d]})
        if len(spots) != size:
            continue
        keep = 0
        for d in combo:
            keep |= BIT[d]
        elim = [(c, d) for c in spots for d in DIGITS_OF[cands[c] & ~keep]]
        if elim:
            return Step(
                _HIDDEN[size],
                eliminations=elim,
                cells=spots,
                houses=[h],
                digits=list(combo),
                explanation=f"In {house_name(h)}, {digit_list(combo)} fit only in {names(spots)}, "
                f"so those cells hold nothing else: remove {removal_text(elim)}.",
            )
    return None


def _sized(fn: Callable[[Candidates, int, int], Step | None], size: int) -> Callable[[Candidates], Step | None]:
    def find(cg: Candidates, h: int) -> Step | None:
        return fn(cg, size, h)

    find.__name__ = f"{fn.__name__.removesuffix('_in')}_{size}"
    return by_house(find, _ORDER)


naked_pair = _sized(naked_in, 2)
naked_triple = _sized(naked_in, 3)
naked_quadruple = _sized(naked_in, 4)
hidden_pair = _sized(hidden_in, 2)
hidden_triple = _sized(hidden_in, 3)
hidden_quadruple = _sized(hidden_in, 4)
