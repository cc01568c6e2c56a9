"""Choosing a puzzle by its filters, and the puzzle of the day, from a pack's prepared lists.

The pack's ``choices`` section holds every record once in group 0 and once more in group ``t + 1`` for
each technique ``t`` its solve path uses; each group is split by difficulty and stars (24 lists), each
list ascending by score (``docs/export-format.md``, "The pool pack"). Any combination of difficulty,
stars, technique and a score range is then a union of at most 24 contiguous slices of those lists: a
binary search at each end of a slice finds it, and a pick is one random number over the slices' total.
So a filtered pick is exactly uniform over the matching records, with no scan and no rejection, and
nothing is built per record when a pool is mapped. The slices of a combination (its :class:`Plan`) are
kept in a bounded LRU, so a repeated combination costs one dict lookup before its pick.

A combination with a clue range or a symmetry reads the ``clue_choices`` section instead: the same groups,
their lists also split by symmetry (240 a group) and each ascending by clue count, then by score. A clue
range is then one contiguous slice of each list; with a score range as well, each clue count in the range is
its own run of the list, cut by score as above.

A set (:meth:`Choices.deal`) is a run of positions of a plan in a seeded order (``shuffle.py``): the same on
every instance that serves the export, as the lists are.
"""

from __future__ import annotations

import hashlib
import math
import random
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from itertools import accumulate
from typing import Final, NamedTuple

from sudokupool.pool import pack
from sudokupool.pool.shuffle import Shuffle
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES

#: Filter combinations whose slices are kept (a plan holds up to 24 small views: a few KB each).
PLANS_KEPT: Final = 1024
#: Slices the kept plans may hold in all: a plan of a clue range and a score range can hold hundreds.
PARTS_KEPT: Final = 32_768
#: Dates whose puzzle of the day is kept, per difficulty filter.
DAYS_KEPT: Final = 64
#: Tries of the daily hash for a puzzle no day scheduled before it settles for a scheduled one.
DAILY_TRIES: Final = 16
DAY: Final = 86_400
_LEVELS: Final = tuple(range(1, len(DIFFICULTIES) + 1))
_STARS: Final = tuple(range(pack.STAR_SLOTS))
_SYMMETRY_CODES: Final = tuple(range(len(SYMMETRIES)))
_FAR: Final = 1 << 53


def _bound(score: int) -> float:
    """A score bound as a float (scores are held as f64): integers past 2**53 are past every score too."""
    return float(max(-_FAR, min(score, _FAR)))


class Filters(NamedTuple):
    """What a pick must match; None is no condition. ``level`` is a difficulty level (1-4), ``technique`` a
    technique's name in lower case (:attr:`Choices.groups`), the scores and clue counts inclusive bounds,
    ``symmetry`` a symmetry's position in ``SYMMETRIES``."""

    level: int | None = None
    stars: int | None = None
    technique: str | None = None
    min_score: int | None = None
    max_score: int | None = None
    min_clues: int | None = None
    max_clues: int | None = None
    symmetry: int | None = None

    @property
    def by_clues(self) -> bool:
        """Whether a clue count or a symmetry is asked for (the plan reads ``clue_choices``)."""
        return self.min_clues is not None or self.max_clues is not None or self.symmetry is not None


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
        self._clues = items("clues")
        self._symmetries = items("symmetries")
        clue_lists = (1 + len(self.names)) * pack.CLUE_LISTS_PER_GROUP
        clue_choices = items("clue_choices")
        # An array filled as it is summed: no list of ten thousand ints made first.
        self._clue_starts = array("Q", accumulate(clue_choices[: 4 * clue_lists].cast("I"), initial=0))
        self._clue_numbers = clue_choices[4 * clue_lists :].cast("I")
        # The daily hash's key: the export's name, so every instance serving one export agrees.
        self._daily_key = hashlib.blake2b(header.export_name.encode()).digest()
        # A set's order's key, with its seed: also the export's name.
        self._set_key = hashlib.blake2b(header.export_name.encode(), person=b"sudokupool-set").digest()
        self._parts = 0
        self._plans: dict[Filters, Plan] = {}
        self._days: OrderedDict[tuple[int, int | None] | tuple[int, Filters], int | None] = OrderedDict()

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
            self._parts += len(plan.parts)
            while len(self._plans) > PLANS_KEPT or (self._parts > PARTS_KEPT and len(self._plans) > 1):
                self._parts -= len(self._plans.pop(next(iter(self._plans))).parts)
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
        try:
            if filters.by_clues:
                parts = self._clue_parts(group, levels, stars, filters)
            else:
                parts = []
                for level in levels:
                    for star in stars:
                        numbers = self._scored(self._list(group, level, star), filters.min_score, filters.max_score)
                        if len(numbers):
                            parts.append(numbers)
        except IndexError:
            raise pack.PackError("a choices list holds a record number out of range") from None
        ends = list(accumulate(len(part) for part in parts))
        return Plan(ends[-1] if ends else 0, ends, parts)

    def _scored(self, numbers: memoryview, low: int | None, high: int | None) -> memoryview:
        """The slice of ``numbers`` (ascending by score) whose scores are within ``low`` and ``high``."""
        if low is None and high is None:
            return numbers
        scores = self._scores

        def key(number: int) -> float:
            return float(scores[number])

        # Records without a score hold -inf: below every bound, so outside every range.
        start = bisect_right(numbers, -math.inf, key=key) if low is None else bisect_left(numbers, _bound(low), key=key)
        end = len(numbers) if high is None else bisect_right(numbers, _bound(high), lo=start, key=key)
        return numbers[start:end]

    def _clue_parts(
        self, group: int, levels: Sequence[int], stars: Sequence[int], filters: Filters
    ) -> list[memoryview]:
        """The slices of ``clue_choices`` matching ``filters``: per list, the run of its clue range, and with a
        score range the part of each clue count's run within it."""
        symmetries = _SYMMETRY_CODES if filters.symmetry is None else (filters.symmetry,)
        kinds = len(SYMMETRIES)
        clue = self._clues.__getitem__
        low, high = filters.min_clues, filters.max_clues
        scored = filters.min_score is not None or filters.max_score is not None
        starts, everything = self._clue_starts, self._clue_numbers
        parts: list[memoryview] = []
        for level in levels:
            for star in stars:
                for symmetry in symmetries:
                    at = group * pack.CLUE_LISTS_PER_GROUP + ((level - 1) * pack.STAR_SLOTS + star) * kinds + symmetry
                    first, last = starts[at], starts[at + 1]
                    if first == last:
                        continue
                    numbers = everything[first:last]
                    start = 0 if low is None else bisect_left(numbers, low, key=clue)
                    end = len(numbers) if high is None else bisect_right(numbers, high, lo=start, key=clue)
                    if not scored:
                        if end > start:
                            parts.append(numbers[start:end])
                        continue
                    while start < end:
                        stop = bisect_right(numbers, clue(numbers[start]), lo=start, hi=end, key=clue)
                        cut = self._scored(numbers[start:stop], filters.min_score, filters.max_score)
                        if len(cut):
                            parts.append(cut)
                        start = stop
        return parts

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

    def deal(self, filters: Filters, seed: int, offset: int, count: int) -> tuple[list[int], int]:
        """Positions ``offset`` to ``offset + count - 1`` of the order ``seed`` gives the records matching
        ``filters`` (fewer where the matches run out), and how many match. Every seed orders every match
        once, the same on every instance serving this export."""
        plan = self.plan(filters)
        total, ends, parts = plan
        shuffle = Shuffle(self._set_key + seed.to_bytes(8, "little"), total)
        records = []
        for position in range(offset, min(total, offset + count)):
            at = shuffle[position]
            k = bisect_right(ends, at)
            number = parts[k][at - ends[k - 1] if k else at]
            records.append(self._record(number))
        return records, total

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

    def daily_matching(self, day: int, filters: Filters) -> int | None:
        """The puzzle of day ``day`` among those matching ``filters`` (a difficulty, a clue range, a symmetry):
        the matching record whose ``used_at`` falls earliest on that day, else a keyed hash's pick among the
        matches (one that no day scheduled, when one of :data:`DAILY_TRIES` is). None when nothing matches."""
        key = (day, filters)
        if key in self._days:
            return self._days[key]
        index = self._scheduled(day, filters.level, filters)
        if index is None:
            plan = self.plan(filters)
            total, ends, parts = plan
            first: int | None = None
            for attempt in range(DAILY_TRIES if total else 0):
                seed = (
                    f"{day}/{filters.level or 0}/{filters.min_clues}/{filters.max_clues}/{filters.symmetry}/{attempt}"
                )
                digest = hashlib.blake2b(seed.encode(), key=self._daily_key, digest_size=8).digest()
                at = int.from_bytes(digest, "little") % total
                k = bisect_right(ends, at)
                number = self._record(parts[k][at - ends[k - 1] if k else at])
                if self._used[number] == pack.NO_USED_AT:
                    first = number
                    break
                if first is None:
                    first = number
            index = first
        self._days[key] = index
        if len(self._days) > DAYS_KEPT:
            self._days.popitem(last=False)
        return index

    def _matches(self, number: int, filters: Filters) -> bool:
        clues = self._clues[number]
        return (
            (filters.min_clues is None or clues >= filters.min_clues)
            and (filters.max_clues is None or clues <= filters.max_clues)
            and (filters.symmetry is None or self._symmetries[number] == filters.symmetry)
        )

    def _scheduled(self, day: int, level: int | None, filters: Filters | None = None) -> int | None:
        start, end = day * DAY, (day + 1) * DAY
        used = self._used
        best: tuple[int, int] | None = None
        for at in _LEVELS if level is None else (level,):
            numbers = self._schedule[at - 1]
            try:
                k = bisect_left(numbers, start, key=used.__getitem__)
                # The first scheduled that day (that matches ``filters``): a day schedules a handful.
                while k < len(numbers):
                    number = numbers[k]
                    when = used[number]
                    if when >= end:
                        break
                    if filters is None or self._matches(number, filters):
                        if best is None or (when, number) < best:
                            best = (when, number)
                        break
                    k += 1
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
