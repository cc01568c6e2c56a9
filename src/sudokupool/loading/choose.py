"""Choosing a puzzle by its filters, and the puzzle of the day, from a pack's prepared lists.

The pack's ``choices`` section holds every record once in group 0 and once more in group ``t + 1`` for
each technique ``t`` its solve path uses; each group is split by difficulty and stars (24 lists), each
list ascending by score (``docs/export-format.md``, "The pool pack"). Any combination of difficulty,
stars, technique and a score range is then a union of at most 24 contiguous slices of those lists: a
binary search at each end of a slice finds it, and a pick is one random number over the slices' total.
So a filtered pick is exactly uniform over the matching records, with no scan and no rejection, and
nothing is built per record when a pool is mapped. The slices of a combination (its :class:`Plan`) are
kept in a bounded LRU, so a repeated combination costs one dict lookup before its pick.
"""

from __future__ import annotations

import hashlib
import math
import random
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from itertools import accumulate
from typing import Final, NamedTuple

from sudokupool.loading import pack
from sudokupool.sudoku import DIFFICULTIES

#: Filter combinations whose slices are kept (a plan holds up to 24 small views: a few KB each).
PLANS_KEPT: Final = 1024
#: Dates whose puzzle of the day is kept, per difficulty filter.
DAYS_KEPT: Final = 64
#: Tries of the daily hash for a puzzle no day scheduled before it settles for a scheduled one.
DAILY_TRIES: Final = 16
DAY: Final = 86_400
_LEVELS: Final = tuple(range(1, len(DIFFICULTIES) + 1))
_STARS: Final = tuple(range(pack.STAR_SLOTS))
_FAR: Final = 1 << 53


def _bound(score: int) -> float:
    """A score bound as a float (scores are held as f64): integers past 2**53 are past every score too."""
    return float(max(-_FAR, min(score, _FAR)))


class Filters(NamedTuple):
    """What a pick must match; None is no condition. ``level`` is a difficulty level (1-4), ``technique`` a
    technique's name in lower case (:attr:`Choices.groups`), the scores inclusive bounds."""

    level: int | None = None
    stars: int | None = None
    technique: str | None = None
    min_score: int | None = None
    max_score: int | None = None


class Plan(NamedTuple):
    """The slices of the lists that match one :class:`Filters`: their total, each one's running end."""

    total: int
    ends: list[int]
    parts: list[memoryview]


class Choices:
    """The filter and daily indexes of one mapped pack (read-only views; plans and days memoized)."""

    def __init__(self, data: memoryview, header: pack.PackHeader, rng: random.Random) -> None:
        sections = header.sections

        def items(name: str) -> memoryview:
            offset, length = sections[name]
            return data[offset : offset + length]

        self._count = header.count
        self._rng = rng
        #: The pack's technique table (the grader's when the pack was made): what the catalogue lists.
        self.table = pack.technique_rows(data, header)
        self.names = [row.name for row in self.table]
        #: A technique's lower-case name -> its group.
        self.groups = {name.lower(): group for group, name in enumerate(self.names, 1)}
        lists = (1 + len(self.names)) * pack.LISTS_PER_GROUP
        choices = items("choices")
        self._lengths = choices[: 4 * lists].cast("I")
        self._starts = [0, *accumulate(self._lengths)]
        self._numbers = choices[4 * lists :].cast("I")
        schedule = items("schedule")
        self._scheduled_lengths = schedule[: 4 * len(DIFFICULTIES)].cast("I").tolist()
        everything = schedule[4 * len(DIFFICULTIES) :].cast("I")
        starts = [0, *accumulate(self._scheduled_lengths)]
        self._schedule = [everything[starts[i] : starts[i + 1]] for i in range(len(DIFFICULTIES))]
        self._scores = items("scores").cast("d")
        self._used = items("used_at").cast("q")
        # The daily hash's key: the export's name, so every instance serving one export agrees.
        self._daily_key = hashlib.blake2b(header.export_name.encode()).digest()
        self._plans: dict[Filters, Plan] = {}
        self._days: OrderedDict[tuple[int, int | None], int | None] = OrderedDict()

    def technique_count(self, group: int) -> int:
        """How many records use the technique of ``group``."""
        at = group * pack.LISTS_PER_GROUP
        return self._starts[at + pack.LISTS_PER_GROUP] - self._starts[at]

    def _list(self, group: int, level: int, stars: int) -> memoryview:
        at = group * pack.LISTS_PER_GROUP + (level - 1) * pack.STAR_SLOTS + stars
        return self._numbers[self._starts[at] : self._starts[at + 1]]

    def _record(self, number: int) -> int:
        # Every record number is checked when the pack is mapped (validate.py); this one comparison keeps a
        # pick in bounds whatever the pool was built from.
        if number >= self._count:
            raise pack.PackError(f"record number {number} out of range (damaged pack)")
        return number

    def plan(self, filters: Filters) -> Plan:
        """The slices matching ``filters`` (memoized; the oldest go first when :data:`PLANS_KEPT` are kept)."""
        plan = self._plans.get(filters)
        if plan is None:
            plan = self._plans[filters] = self._make_plan(filters)
            if len(self._plans) > PLANS_KEPT:
                del self._plans[next(iter(self._plans))]
        return plan

    def _make_plan(self, filters: Filters) -> Plan:
        levels = _LEVELS if filters.level is None else (filters.level,)
        stars = _STARS if filters.stars is None else (filters.stars,)
        group = 0
        if filters.technique is not None:
            found = self.groups.get(filters.technique)
            if found is None:
                return Plan(0, [], [])
            group = found
        low, high = filters.min_score, filters.max_score
        scores = self._scores

        def key(number: int) -> float:
            return float(scores[number])

        parts: list[memoryview] = []
        for level in levels:
            for star in stars:
                numbers = self._list(group, level, star)
                if low is not None or high is not None:
                    try:
                        # Records without a score hold -inf: below every bound, so outside every range.
                        if low is None:
                            start = bisect_right(numbers, -math.inf, key=key)
                        else:
                            start = bisect_left(numbers, _bound(low), key=key)
                        end = len(numbers) if high is None else bisect_right(numbers, _bound(high), lo=start, key=key)
                    except IndexError:
                        raise pack.PackError("a choices list holds a record number out of range") from None
                    numbers = numbers[start:end]
                if len(numbers):
                    parts.append(numbers)
        ends = list(accumulate(len(part) for part in parts))
        return Plan(ends[-1] if ends else 0, ends, parts)

    def pick(self, filters: Filters) -> int | None:
        """A record matching ``filters``, uniformly at random; None when none does (or the technique is not
        one of the pack's)."""
        plan = self._plans.get(filters) or self.plan(filters)
        total, ends, parts = plan
        if not total:
            return None
        at = self._rng.randrange(total)
        if len(parts) == 1:
            number = parts[0][at]
        else:
            k = bisect_right(ends, at)
            number = parts[k][at - ends[k - 1] if k else at]
        # As in _record: validated at load, compared again where read.
        if number >= self._count:
            raise pack.PackError(f"record number {number} out of range (damaged pack)")
        return number

    def count(self, filters: Filters) -> int:
        """How many records match ``filters``."""
        return self.plan(filters).total

    def daily(self, day: int, level: int | None, by_level: Sequence[Sequence[int]]) -> int | None:
        """The puzzle of day ``day`` (days since 1970-01-01, UTC) of difficulty ``level`` (None: any):
        the record whose ``used_at`` falls earliest on that day, else a keyed hash's pick among those
        no day scheduled (``by_level``: the record numbers of each difficulty). None for an empty pool."""
        key = (day, level)
        if key in self._days:
            return self._days[key]
        index = self._scheduled(day, level)
        if index is None:
            index = self._hashed(day, level, by_level)
        self._days[key] = index
        if len(self._days) > DAYS_KEPT:
            self._days.popitem(last=False)
        return index

    def _scheduled(self, day: int, level: int | None) -> int | None:
        start, end = day * DAY, (day + 1) * DAY
        used = self._used
        best: tuple[int, int] | None = None
        for at in _LEVELS if level is None else (level,):
            numbers = self._schedule[at - 1]
            try:
                k = bisect_left(numbers, start, key=used.__getitem__)
                if k < len(numbers):
                    number = numbers[k]
                    when = used[number]
                    if when < end and (best is None or (when, number) < best):
                        best = (when, number)
            except IndexError:
                raise pack.PackError("the schedule holds a record number out of range") from None
        return None if best is None else self._record(best[1])

    def _hashed(self, day: int, level: int | None, by_level: Sequence[Sequence[int]]) -> int | None:
        if level is None:
            candidates: Sequence[int] = range(self._count)
        else:
            candidates = by_level[level - 1]
        if not candidates:
            return None
        first: int | None = None
        for attempt in range(DAILY_TRIES):
            seed = f"{day}/{level or 0}/{attempt}".encode()
            digest = hashlib.blake2b(seed, key=self._daily_key, digest_size=8).digest()
            number = self._record(candidates[int.from_bytes(digest, "little") % len(candidates)])
            if self._used[number] == pack.NO_USED_AT:
                return number
            if first is None:
                first = number
        return first
