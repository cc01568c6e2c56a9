"""Memory between solver steps: most of a step's searches see a grid that barely changed.

A step changes the candidates of one or a few digits, yet every finder runs again after it. A
single-digit technique (fish, Skyscraper, X-Chain, colouring ...) depends only on where its digit
can still go, so :func:`by_digit` keeps each finder's answer per digit and placement mask and
recomputes only the digits the step touched. The answer for a digit is the same Step object as long
as the digit's candidates are the same; finders and the grader never mutate a Step.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.grid import HOUSES
from sudokupool.sudoku.techniques.step import Step

MAX_ENTRIES = 20_000  # per finder; cleared when full (a hard puzzle's whole solve fits easily)
#: Every cache of the finders: emptied between puzzles (:func:`forget`). Keys hold a digit's or a house's
#: candidates, which another puzzle almost never repeats, so kept across puzzles they only filled up: a
#: worker of a long build grew by ~14 KB a puzzle for thousands of puzzles.
_CACHES: list[dict[object, object]] = []

_last: list[object] = [None, ()]
_last_houses: list[object] = [None, ()]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def kept(cache: dict[K, V]) -> dict[K, V]:
    """Register ``cache`` (a finder's module-level memory) to be emptied by :func:`forget`; return it."""
    _CACHES.append(cache)  # type: ignore[arg-type]
    return cache


def forget() -> None:
    """Empty every finder's memory: a new puzzle starts (the grader calls this)."""
    for cache in _CACHES:
        cache.clear()
    _last[:] = [None, ()]
    _last_houses[:] = [None, ()]


def remember(cache: dict[K, V], key: K, value: V) -> V:
    """Keep ``value`` as ``cache[key]`` and return it (the cache is emptied when full). Callers look the
    key up themselves first: a hit costs no call, which the per-digit searches notice."""
    if len(cache) >= MAX_ENTRIES:
        cache.clear()
    cache[key] = value
    return value


def digit_masks(cg: Candidates) -> tuple[int, ...]:
    """For each digit 1-9 (index 0 unused) the cells holding it as a candidate, as an 81-bit mask."""
    key = tuple(cg.cands)
    if _last[0] != key:
        masks = [0] * 10
        for cell, m in enumerate(key):
            while m:
                low = m & -m
                masks[low.bit_length()] |= 1 << cell
                m ^= low
        _last[0] = key
        _last[1] = tuple(masks)
    masks_out = _last[1]
    assert isinstance(masks_out, tuple)
    return masks_out


def house_keys(cg: Candidates) -> tuple[tuple[int, ...], ...]:
    """For each house 0-26 its number and its cells' candidates, made once per grid: the key of the
    house's answers in a :func:`by_house` finder, shared by the subset finders tried one after another."""
    key = tuple(cg.cands)
    if _last_houses[0] != key:
        _last_houses[0] = key
        _last_houses[1] = tuple((h, *(key[c] for c in house)) for h, house in enumerate(HOUSES))
    keys = _last_houses[1]
    assert isinstance(keys, tuple)
    return keys


def by_digit(find: Callable[[Candidates, int], Step | None]) -> Callable[[Candidates], Step | None]:
    """A finder trying digits 1-9 in order with ``find(cg, digit)``, remembering each digit's answer."""
    cache: dict[tuple[int, int], Step | None] = kept({})

    def finder(cg: Candidates) -> Step | None:
        masks = digit_masks(cg)
        for digit in range(1, 10):
            mask = masks[digit]
            if not mask:
                continue
            key = (digit, mask)
            step = cache[key] if key in cache else remember(cache, key, find(cg, digit))
            if step is not None:
                return step
        return None

    finder.__name__ = find.__name__.removesuffix("_digit").lstrip("_")
    finder.__doc__ = find.__doc__
    return finder


def by_digit_pair(
    find: Callable[[Candidates, int], tuple[Step | None, Step | None]],
) -> Callable[[Candidates, int], tuple[Step | None, Step | None]]:
    """``find(cg, digit)`` remembered per digit and mask, for a search that answers two techniques."""
    cache: dict[tuple[int, int], tuple[Step | None, Step | None]] = kept({})

    def pair(cg: Candidates, digit: int) -> tuple[Step | None, Step | None]:
        key = (digit, digit_masks(cg)[digit])
        return cache[key] if key in cache else remember(cache, key, find(cg, digit))

    return pair


def by_house(
    find: Callable[[Candidates, int], Step | None], order: tuple[int, ...]
) -> Callable[[Candidates], Step | None]:
    """A finder trying the houses in ``order`` with ``find(cg, house)``, for a technique that reads one
    house's candidates only, remembering each house's answer for its candidates."""
    cache: dict[tuple[int, ...], Step | None] = kept({})

    def finder(cg: Candidates) -> Step | None:
        keys = house_keys(cg)
        for h in order:
            key = keys[h]
            step = cache[key] if key in cache else remember(cache, key, find(cg, h))
            if step is not None:
                return step
        return None

    finder.__name__ = find.__name__
    finder.__doc__ = find.__doc__
    return finder
