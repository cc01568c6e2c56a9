"""The pool: immutable indexes over prepared response bodies, read from a pack (``sudokupool.loading.pack``).

A :class:`Pool` serves from one mapped pack and is never changed; a reload maps a new one and the app
swaps a single reference, so readers never see half a pool. An export without a pack is written as one
by a :class:`PoolBuilder` and mapped like any other.

A record's body is held as the start of one gzip member (``compression.open_member``) of the record
without its last field, ``synced_at``: the pool ends each member with the export's time when it serves
it (a final stored block and the trailer), inflates it for clients that do not take gzip, and derives
the record's one weak ETag from the trailer. The export's time is the same on every instance and worker
that serves the export, whenever each loaded it, so they all answer with the same bytes and ETag.
Solution bodies (too short to gain) are held raw.

Memory: the pool holds no Python object per puzzle. Bodies, ids, the id index and the per-difficulty
lists are slices of the mapping, so workers on one machine that map the same pack share one copy in the
page cache, and an old pool's mapping goes when the last request that holds the pool is done with it.
"""

from __future__ import annotations

import itertools
import mmap
import random
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Final
from zlib import crc32

import orjson

from sudokupool.api.compression import final_block, inflate, trailer
from sudokupool.loading import pack
from sudokupool.loading.choose import Choices, Filters
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.ids import normalise_id

SOLUTION_WIDTH: Final = pack.SOLUTION_WIDTH
_SOLUTION_AT: Final = SOLUTION_WIDTH - 81 - 2
_ETAG_BYTES: Final = pack.ETAG_WIDTH


@dataclass(frozen=True)
class PoolInfo:
    """Where a pool came from: the export's key and size, when this process loaded it (seconds, UTC),
    whether the export was parsed (its pack made here) rather than its pack mapped, and the export's time
    (:func:`sudokupool.loading.loader.export_time`; seconds, UTC), which the pool serves as ``synced_at``
    and ``last_synced_at``. Without one (a pool built from records), ``synced_at`` is ``loaded_at``."""

    source: str
    export_key: str
    export_size: int
    loaded_at: int
    parsed: bool = False
    exported: int | None = None

    @property
    def synced_at(self) -> int:
        """What the pool serves as ``synced_at``: the export's time, the same wherever it is loaded."""
        return self.loaded_at if self.exported is None else self.exported


class Pool:
    """Immutable indexes over the prepared bodies of one mapped pack. Make one with :meth:`from_pack` or a
    :class:`PoolBuilder`."""

    def __init__(self, data: mmap.mmap, header: pack.PackHeader, info: PoolInfo) -> None:
        """A pool over ``data``, a pack already checked (:func:`sudokupool.loading.pack.check`)."""
        self.info = info
        self.header = header
        self._data = data
        self._count = header.count
        self._mask = header.slots - 1
        self._key, self._shift = header.table_key, 129 - header.slots.bit_length()
        view = memoryview(data)
        sections = header.sections

        def items(name: str) -> memoryview:
            offset, length = sections[name]
            return view[offset : offset + length]

        self._table = items("table").cast("I")
        self._offsets = items("offsets").cast("Q")
        everything = items("by_difficulty").cast("I")
        starts = [0, *itertools.accumulate(header.counts)]
        self._by_difficulty = {name: everything[starts[i] : starts[i + 1]] for i, name in enumerate(DIFFICULTIES)}
        self._counts = dict(zip(DIFFICULTIES, header.counts, strict=True))
        # u32 pairs, read as native integers: packs are little-endian, and so is every host that maps
        # one (pack.check refuses a pack on a big-endian host).
        self._checks = items("checks").cast("I")
        self._bodies_at = sections["bodies"][0]
        self._ids_at = sections["ids"][0]
        self._solutions_at = sections["solutions"][0]
        self._etags_at = sections["etags"][0]
        self._puzzles_at = sections["puzzles"][0]
        synced_at = info.synced_at
        self._tail = b',"synced_at":%d}' % synced_at
        self._tail_block = final_block(self._tail)
        self._rng = random.Random()
        #: The filters of ``random`` and the daily puzzle (``choose.py``).
        self.choices = Choices(view, header, self._rng)
        self._by_level = [self._by_difficulty[name] for name in DIFFICULTIES]
        stats = {"total": header.count, "by_difficulty": self._counts, "last_synced_at": synced_at}
        self.stats_body = orjson.dumps(stats)

    @classmethod
    def from_pack(cls, data: mmap.mmap, info: PoolInfo, *, background: bool = False) -> Pool:
        """Check the mapped pack ``data`` (made from the export ``info`` names; ``background``: beside a
        serving loop, see :func:`~sudokupool.loading.pack.check`) and serve it. Raise
        :class:`~sudokupool.loading.pack.PackError`."""
        header = pack.check(data, export_name=info.export_key, export_size=info.export_size, background=background)
        return cls(data, header, info)

    def section(self, name: str) -> bytes:
        """The bytes of one of the pack's sections."""
        offset, length = self.header.sections[name]
        return self._data[offset : offset + length]

    def __len__(self) -> int:
        return self._count

    def drop_pages(self, step: int = 1 << 20) -> None:
        """Drop this process's page-table entries for the pool's mapping, ``step`` bytes at a time, once
        nothing reads it any more (the pages stay in the page cache for other workers).

        Unmapping a touched mapping whole tears them all down under the process's memory-map lock
        (about 20 ms for the 100k bench pool's pack); ``MADV_DONTNEED`` does not take it for writing.
        ``mmap.madvise`` holds the GIL while it runs, so the steps are small (about 0.1 ms) and the
        thread lets go of the GIL after each: with 8 MiB steps and no yield, p99 during back-to-back
        swaps was 2-5x steady.
        """
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is not None:
            for at in range(0, len(self._data), step):
                self._data.madvise(advice, at, min(step, len(self._data) - at))
                time.sleep(0)

    def __repr__(self) -> str:
        return f"<Pool of {self._count} puzzles from {self.info.export_key}>"

    def _lookup(self, key: str) -> int | None:
        if len(key) != pack.ID_WIDTH:
            return None
        try:
            # pack.slot_of, inlined: this runs for every request by id.
            slot = (self._key * int(key, 36) >> self._shift) & self._mask
        except ValueError:
            return None
        wanted = key.encode()
        table, data, ids_at, mask = self._table, self._data, self._ids_at, self._mask
        while number := table[slot]:
            start = ids_at + pack.ID_WIDTH * (number - 1)
            if data[start : start + pack.ID_WIDTH] == wanted:
                return number - 1
            slot = (slot + 1) & mask
        return None

    def find(self, canonical_id: str) -> int | None:
        """The index of the puzzle with this id (case-insensitive), or None."""
        index = self._lookup(canonical_id)
        if index is None:
            # Share codes are case-insensitive and accept Crockford's look-alikes (I, L, O).
            normal = normalise_id(canonical_id)
            if normal is not None and normal != canonical_id:
                index = self._lookup(normal)
        return index

    def _check(self, index: int) -> tuple[int, int]:
        """The CRC-32 and length of the whole identity body of record ``index``."""
        checks, tail = self._checks, self._tail
        return crc32(tail, checks[2 * index]), checks[2 * index + 1] + len(tail)

    def gzip_body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index`` as one gzip member."""
        at = self._bodies_at
        crc, length = self._check(index)
        start, end = at + self._offsets[index], at + self._offsets[index + 1]
        return b"".join((self._data[start:end], self._tail_block, trailer(crc, length)))

    def body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index``, inflated."""
        return inflate(self.gzip_body(index))

    def body_length(self, index: int) -> int:
        """The length of :meth:`body` without inflating it."""
        return self._check(index)[1]

    def solution_body(self, index: int) -> bytes:
        """The SolutionResponse (JSON) of puzzle ``index``."""
        start = self._solutions_at + index * SOLUTION_WIDTH
        return self._data[start : start + SOLUTION_WIDTH]

    def etag(self, index: int, *, solution: bool = False) -> str:
        """The weak ETag of the public record, the same in every encoding: the CRC-32 and length of its
        body, as its gzip trailer holds them (or CRC-32 and Adler-32 of the solution body)."""
        if solution:
            start = self._etags_at + index * _ETAG_BYTES
            return f'W/"{self._data[start : start + _ETAG_BYTES].hex()}"'
        crc, length = self._check(index)
        return f'W/"{crc:08x}{length & 0xFFFFFFFF:08x}"'

    def puzzle(self, index: int) -> str:
        """The puzzle grid (81 characters) of puzzle ``index``."""
        start = self._puzzles_at + index * pack.GRID_WIDTH
        return self._data[start : start + pack.GRID_WIDTH].decode()

    def solution(self, index: int) -> str:
        """The solution grid (81 digits) of puzzle ``index``."""
        start = self._solutions_at + index * SOLUTION_WIDTH + _SOLUTION_AT
        return self._data[start : start + 81].decode()

    def pick(self, difficulty: str | None = None) -> int | None:
        """A uniformly random puzzle, of one difficulty (a capitalised name) or of the whole pool (the same
        as weighting difficulties by the pool's mix)."""
        if difficulty is None:
            count = self._count
            return self._rng.randrange(count) if count else None
        indexes = self._by_difficulty.get(difficulty)
        if not indexes:
            return None
        index: int = indexes[self._rng.randrange(len(indexes))]
        return index

    def count(self, difficulty: str) -> int:
        return self._counts.get(difficulty, 0)

    def choose(self, filters: Filters) -> int | None:
        """A uniformly random puzzle matching ``filters``, or None when none does."""
        return self.choices.pick(filters)

    def daily(self, day: int, level: int | None = None) -> int | None:
        """The puzzle of the day ``day`` (days since 1970-01-01, UTC), of difficulty ``level`` (1-4) or any:
        the same on every instance that serves this export (:meth:`Choices.daily`)."""
        return self.choices.daily(day, level, self._by_level)


class PoolBuilder(pack.PackWriter):
    """Writes records (:meth:`~sudokupool.loading.pack.PackWriter.add`) into a pack in ``file`` (default: an
    anonymous temporary file) and maps it as a :class:`Pool`."""

    def __init__(self, *, loaded_at: int, exported: int | None = None, file: IO[bytes] | None = None) -> None:
        super().__init__(tempfile.TemporaryFile() if file is None else file)  # noqa: SIM115 - mapped, then closed
        self.loaded_at = loaded_at
        self.exported = exported

    def build(self, *, source: str, export_key: str, export_size: int) -> Pool:
        """Write the pack's indexes and header and map it: the finished, immutable pool. The file may be
        closed afterwards."""
        header = self.finish(export_name=export_key, export_size=export_size, made_at=self.loaded_at)
        data = mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ)
        info = PoolInfo(source, export_key, export_size, self.loaded_at, parsed=True, exported=self.exported)
        return Pool(data, header, info)
