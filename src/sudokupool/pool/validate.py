"""The structure of a mapped pack, checked before it is served: whatever a pack holds, serving from it stays
in bounds and in bounded time.

A pack's checksum only proves it is whole; anyone who can write a pack can also make its checksum right.
This module checks every field the serving side reads (``sudokupool.pool.pool``): sections inside the
file and apart (``pack.read_header``), body offsets inside the bodies section and increasing, each body's
recorded inflated length within ``SUDOKUPOOL_MAX_RECORD_BYTES`` and its compressed length within what
deflate makes of that, id-table entries in range with a free slot and a bound on every probe, difficulty
lists in range and as long as their counts, grids, solutions and ids of their alphabets, and the filter
sections of ``choose.py`` (stars 0-5, clue counts 0-81, symmetry codes, the technique table, list lengths,
every record number in range).
A body itself is inflated (no further than its recorded length) and checked before it is first sent,
and all of them in the background once the pool is served (``Pool.verify``): inflating every body here
would cost ~16 s for 1M records. Whether the pack holds what its export holds is ``sudokupool check``'s to prove
(docs/security.md).

The checks run per section, each over a run of records at a time (``SECTION_CHECKS``), with bytes
methods (``translate``, strided slices) and ``map`` over ``memoryview`` s doing the per-record work in C:
under a microsecond a record in all (docs/benchmarks.md, "Packs"). A new section adds its check there,
or, when it is read as a whole (the filter lists, the id table), a function :func:`validate` calls.
"""

from __future__ import annotations

import functools
import itertools
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from sudokupool.pool import pack
from sudokupool.pool.pack import PackError, PackHeader
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES

#: Records checked at a time (id-table slots and difficulty-list entries: four times as many): each step
#: holds the GIL for about a millisecond (a live swap checks beside the serving loop, and sleeps between
#: steps as the checksum does).
STEP: Final = 8192
#: Solution bodies checked column by column at a time: 260 KB of them, which stay in the CPU's cache
#: while their 127 columns are read.
_SOLUTIONS_STEP: Final = 2048
#: The longest run of filled id-table slots a pack may have: every lookup probes at most one more slot
#: than this. A table the pack writer fills (half full, slots drawn by a random key) has runs of a few
#: dozen slots; one of 512 has a chance below 1e-15.
MAX_RUN: Final = 512
#: The shortest open gzip member (:func:`~sudokupool.pool.gzip_member.open_member`): a 10-byte header, a
#: deflate block, the 5 bytes of a sync flush.
MEMBER_MIN: Final = 16
#: The longest tail (``,"synced_at":T}``) the pool appends to a body, which must then still be within
#: ``SUDOKUPOOL_MAX_RECORD_BYTES``.
TAIL_MAX: Final = 32
_ID_ALPHABET: Final = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_LEVELS: Final = bytes(range(1, 5))
_STARS: Final = bytes(range(pack.STAR_SLOTS))
_CLUES: Final = bytes(range(pack.GRID_WIDTH + 1))
_SYMMETRIES: Final = bytes(range(len(SYMMETRIES)))
_SOLUTION_PREFIX: Final = b'{"canonical_id":"'
_SOLUTION_MIDDLE: Final = b'","solution":"'
_SOLUTION_AT: Final = len(_SOLUTION_PREFIX) + pack.ID_WIDTH + len(_SOLUTION_MIDDLE)
_SOLUTION_TEMPLATE: Final = _SOLUTION_PREFIX + bytes(pack.ID_WIDTH) + _SOLUTION_MIDDLE + bytes(pack.GRID_WIDTH) + b'"}'
#: The columns of a solution body that hold the same byte in every record, and that byte.
_SOLUTION_FIXED: Final = [
    (column, _SOLUTION_TEMPLATE[column : column + 1])
    for column in range(len(_SOLUTION_TEMPLATE))
    if not len(_SOLUTION_PREFIX) <= column < len(_SOLUTION_PREFIX) + pack.ID_WIDTH
    and not _SOLUTION_AT <= column < _SOLUTION_AT + pack.GRID_WIDTH
]


@dataclass(frozen=True)
class Bounds:
    """What a check needs besides the pack: the longest record served (``SUDOKUPOOL_MAX_RECORD_BYTES``)."""

    max_record_bytes: int


@dataclass
class _Pack:
    data: memoryview
    header: PackHeader
    bounds: Bounds

    def section(self, name: str) -> memoryview:
        offset, length = self.header.sections[name]
        return self.data[offset : offset + length]


def _offsets(p: _Pack, start: int, stop: int) -> None:
    offsets = p.section("offsets").cast("Q")[start : stop + 1].tolist()
    if start == 0 and offsets[0] != 0:
        raise PackError("section offsets: the first body does not start at 0")
    if stop == p.header.count and offsets[-1] != p.header.sections["bodies"][1]:
        raise PackError("section offsets: the last body does not end where the bodies section does")
    lengths = list(map(operator.sub, offsets[1:], offsets[:-1]))
    # A member is at least its header, a deflate block and its sync flush; a negative length (offsets not
    # increasing) is smaller still.
    if min(lengths) < MEMBER_MIN:
        raise PackError(f"section offsets: body {start + lengths.index(min(lengths))} is too short for a gzip member")
    # The bodies' inflated lengths (checks) bound their compressed ones: deflate adds at most a few bytes
    # per 16 KiB to data it cannot compress; this leaves a margin of 1/64 and 1 KiB.
    recorded = p.section("checks").cast("I")[2 * start + 1 : 2 * stop + 1 : 2].tolist()
    if max(map(operator.sub, lengths, recorded)) > (p.bounds.max_record_bytes >> 6) + 1024:
        raise PackError("section offsets: a body is longer than deflate makes of its recorded length")


def _checks(p: _Pack, start: int, stop: int) -> None:
    recorded = p.section("checks").cast("I")[2 * start + 1 : 2 * stop + 1 : 2]
    most = p.bounds.max_record_bytes - TAIL_MAX
    if max(recorded) > most:
        raise PackError(
            f"section checks: a body inflates to more than SUDOKUPOOL_MAX_RECORD_BYTES "
            f"({max(recorded)} bytes recorded, at most {most} allowed)"
        )


def _levels(p: _Pack, start: int, stop: int) -> None:
    if bytes(p.section("levels")[start:stop]).translate(None, _LEVELS):
        raise PackError("section levels: a difficulty level is not 1 to 4")


def _ids(p: _Pack, start: int, stop: int) -> None:
    width = pack.ID_WIDTH
    if bytes(p.section("ids")[start * width : stop * width]).translate(None, _ID_ALPHABET):
        raise PackError("section ids: an id is not 13 upper-case Crockford base32 characters")


def _puzzles(p: _Pack, start: int, stop: int) -> None:
    width = pack.GRID_WIDTH
    if bytes(p.section("puzzles")[start * width : stop * width]).translate(None, b".123456789"):
        raise PackError("section puzzles: a grid is not 81 characters of 1-9 and '.'")


def _stars(p: _Pack, start: int, stop: int) -> None:
    if bytes(p.section("stars")[start:stop]).translate(None, _STARS):
        raise PackError("section stars: a value above 5")


def _clues(p: _Pack, start: int, stop: int) -> None:
    if bytes(p.section("clues")[start:stop]).translate(None, _CLUES):
        raise PackError("section clues: a clue count above 81")


def _symmetries(p: _Pack, start: int, stop: int) -> None:
    if bytes(p.section("symmetries")[start:stop]).translate(None, _SYMMETRIES):
        raise PackError(f"section symmetries: a symmetry code of {len(SYMMETRIES)} or more")


def _solutions(p: _Pack, start: int, stop: int) -> None:
    """Each solution body is ``{"canonical_id":"<its record's id>","solution":"<81 digits 1-9>"}``, checked
    column by column: a strided slice per column of the step's bodies (small enough to stay in the CPU's
    cache), compared with the fixed byte or the record's id, or joined with the other digit columns and
    checked with one ``translate``. A ``translate`` of the whole section took twice as long: a mix of
    classes defeats its branch predictor, where a column of one class does not."""
    for first in range(start, stop, _SOLUTIONS_STEP):
        _solution_columns(p, first, min(first + _SOLUTIONS_STEP, stop))


def _solution_columns(p: _Pack, start: int, stop: int) -> None:
    width, n = pack.SOLUTION_WIDTH, stop - start
    rows = bytes(p.section("solutions")[start * width : stop * width])
    ids = bytes(p.section("ids")[start * pack.ID_WIDTH : stop * pack.ID_WIDTH])
    for column, byte in _SOLUTION_FIXED:
        if rows[column::width] != byte * n:
            raise PackError("section solutions: a solution body is not of the form a pack holds")
    for i in range(pack.ID_WIDTH):
        if rows[len(_SOLUTION_PREFIX) + i :: width] != ids[i :: pack.ID_WIDTH]:
            raise PackError("section solutions: a solution body names another puzzle than its record")
    digits = b"".join([rows[_SOLUTION_AT + i :: width] for i in range(pack.GRID_WIDTH)])
    if digits.translate(None, b"123456789"):
        raise PackError("section solutions: a solution is not 81 digits 1-9")


#: The checks of each section over records ``start`` to ``stop``, in the order they run (offsets before
#: the bodies they locate).
SECTION_CHECKS: Final[dict[str, Callable[[_Pack, int, int], None]]] = {
    "checks": _checks,
    "offsets": _offsets,
    "levels": _levels,
    "ids": _ids,
    "puzzles": _puzzles,
    "solutions": _solutions,
    "stars": _stars,
    "clues": _clues,
    "symmetries": _symmetries,
}


@functools.lru_cache(maxsize=2)
def _lanes(count: int) -> tuple[int, int, int]:
    """For ``count`` u32 values read as one little-endian integer: a mask of every other value (the even
    ones, each with a zero field of 32 bits above it), that mask shifted onto those zero fields, and a 1 in
    each even field."""
    pairs = (count + 1) // 2
    low = int.from_bytes(b"\xff\xff\xff\xff\0\0\0\0" * pairs, "little")
    return low, low << 32, int.from_bytes(b"\1\0\0\0\0\0\0\0" * pairs, "little")


def all_below(values: memoryview, limit: int) -> bool:
    """Whether every u32 in ``values`` is below ``limit`` (1 to 2**32), in a few big-integer operations
    instead of a Python int per value (``max`` over a ``memoryview``: three to four times the CPU). Half of
    the values at a time sit in 64-bit fields, each with its upper half zero; adding ``2**32 - limit`` to
    every field carries into that upper half exactly where a value is ``limit`` or more."""
    low, high, ones = _lanes(len(values))
    packed = int.from_bytes(values, "little")
    add = ((1 << 32) - limit) * ones
    return not (((packed & low) + add) | (((packed >> 32) & low) + add)) & high


def _by_difficulty(p: _Pack, step: Callable[[], None]) -> None:
    """Each difficulty's list holds as many indexes as the levels section has records of it, each of a
    record. Whether each is a record of that difficulty is ``check``'s to prove: a pick that served
    another difficulty stays in bounds, and the check took as long as the rest of this list's."""
    header, levels = p.header, bytes(p.section("levels"))
    for level, count in enumerate(header.counts, 1):
        if levels.count(level) != count:
            raise PackError(f"section levels: {levels.count(level)} records of level {level}, the header says {count}")
    everything = p.section("by_difficulty").cast("I")
    starts = [0, *itertools.accumulate(header.counts)]
    for level, (first, last) in enumerate(itertools.pairwise(starts), 1):
        for at in range(first, last, 4 * STEP):
            if not all_below(everything[at : min(at + 4 * STEP, last)], header.count):
                raise PackError(f"section by_difficulty: an index of level {level} is past the last record")
            step()


def _filters(p: _Pack, step: Callable[[], None]) -> None:
    """The filter sections read as a whole (``choose.py``): the technique table is one (names, levels
    1-4, scores), the lengths of the ``choices`` and ``schedule`` lists add up to their sections, each
    difficulty's lists hold its records, a technique's lists no more than the pack, and every record
    number they hold is a record's."""
    header, count = p.header, p.header.count
    names = [row.name for row in pack.technique_rows(p.data, header)]
    choices = (1 + len(names)) * pack.LISTS_PER_GROUP
    lengths = pack.list_lengths(p.section("choices"), choices, "choices")
    for level, expected in enumerate(header.counts):
        if sum(lengths[level * pack.STAR_SLOTS : (level + 1) * pack.STAR_SLOTS]) != expected:
            raise PackError(f"section choices: {DIFFICULTIES[level]} lists do not hold {expected} records")
    for group in range(1, 1 + len(names)):
        if sum(lengths[group * pack.LISTS_PER_GROUP : (group + 1) * pack.LISTS_PER_GROUP]) > count:
            raise PackError(f"section choices: technique {names[group - 1]!r} lists more records than the pack holds")
    clue_choices = (1 + len(names)) * pack.CLUE_LISTS_PER_GROUP
    lengths = pack.list_lengths(p.section("clue_choices"), clue_choices, "clue_choices")
    per_level = pack.CLUE_LISTS_PER_GROUP // len(DIFFICULTIES)
    for level, expected in enumerate(header.counts):
        if sum(lengths[level * per_level : (level + 1) * per_level]) != expected:
            raise PackError(f"section clue_choices: {DIFFICULTIES[level]} lists do not hold {expected} records")
    for group in range(1, 1 + len(names)):
        if sum(lengths[group * pack.CLUE_LISTS_PER_GROUP : (group + 1) * pack.CLUE_LISTS_PER_GROUP]) > count:
            raise PackError(
                f"section clue_choices: technique {names[group - 1]!r} lists more records than the pack holds"
            )
    scheduled = len(DIFFICULTIES)
    if sum(pack.list_lengths(p.section("schedule"), scheduled, "schedule")) > count:
        raise PackError("section schedule: lists more records than the pack holds")
    for name, lists in (("choices", choices), ("schedule", scheduled), ("clue_choices", clue_choices)):
        numbers = p.section(name)[4 * lists :].cast("I")
        for at in range(0, len(numbers), 4 * STEP):
            if not all_below(numbers[at : at + 4 * STEP], count):
                raise PackError(f"section {name}: a record number is past the last record")
            step()


def _table(p: _Pack, step: Callable[[], None]) -> int:
    """Every id-table entry is 0 (free) or a record's number, and no run of filled slots is longer than
    :data:`MAX_RUN` (so there is a free slot and every probe ends). Return the longest run."""
    header = p.header
    entries = p.section("table").cast("I")
    for at in range(0, header.slots, 4 * STEP):
        if not all_below(entries[at : at + 4 * STEP], header.count + 1):
            raise PackError("section table: an entry is past the last record")
        step()
    return longest_run(bytes(p.section("table")))


def longest_run(table: bytes) -> int:
    """The longest run of filled slots (going round from the last to the first) in the id table ``table``
    (u32 entries); raise :class:`PackError` when no slot is free, as a lookup of an unknown id would never
    end. One flag byte per slot (1: filled) is made by ``translate`` and OR-ing the four bytes of each slot
    as shifted copies of one integer; the longest run is then bisected by searching for runs of ones:
    a handful of C calls over the table."""
    nonzero = table.translate(bytes([0]) + bytes([1]) * 255)
    bits = int.from_bytes(nonzero, "little")
    bits |= (bits >> 8) | (bits >> 16) | (bits >> 24)
    flags = bits.to_bytes(len(nonzero), "little")[::4]
    free = flags.find(0)
    if free < 0:
        raise PackError("section table: no free slot (a lookup of an unknown id would never end)")
    flags = flags[free:] + flags[:free]
    if b"\x01" * (MAX_RUN + 1) in flags:
        raise PackError(f"section table: a run of filled slots longer than the {MAX_RUN} a pack may have")
    shortest_missing, longest = MAX_RUN + 1, 0
    while longest + 1 < shortest_missing:
        middle = (longest + shortest_missing) // 2
        if b"\x01" * middle in flags:
            longest = middle
        else:
            shortest_missing = middle
    return longest


def validate(data: memoryview, header: PackHeader, *, max_record_bytes: int, background: bool = False) -> int:
    """Check the structure of the pack ``data`` (its header already read): raise :class:`PackError` naming
    the section and the problem. Return the most slots a lookup needs to probe. In the ``background``
    (a live swap), it sleeps after each step seven times as long as the step took, as the checksum does."""
    p = _Pack(data, header, Bounds(max_record_bytes))
    if header.solution_width != pack.SOLUTION_WIDTH:
        raise PackError(f"solutions of {header.solution_width} bytes, not {pack.SOLUTION_WIDTH}")
    started = time.perf_counter()

    def step() -> None:
        nonlocal started
        if background:
            time.sleep((time.perf_counter() - started) * pack.PACE)
            started = time.perf_counter()

    for start in range(0, header.count, STEP):
        stop = min(start + STEP, header.count)
        for check in SECTION_CHECKS.values():
            check(p, start, stop)
        step()
    _by_difficulty(p, step)
    _filters(p, step)
    probes = _table(p, step) + 1
    _lanes.cache_clear()  # a few hundred KB, not kept in every worker while it serves
    return probes
