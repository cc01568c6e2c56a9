"""The pool: immutable indexes over prepared response bodies, read from a pack (``sudokupool.pool.pack``).

A :class:`Pool` serves from one mapped pack and is never changed; a reload maps a new one and the app
swaps a single reference, so readers never see half a pool. An export without a pack is written as one
by a :class:`PoolBuilder` and mapped like any other.

A record's body is held as the start of one gzip member (``gzip_member.open_member``) of the record
without its last field, ``synced_at``: the pool ends each member with the export's time when it serves
it (a final stored block and the trailer), inflates it for clients that do not take gzip, and derives
the record's one weak ETag from the trailer. The export's time is the same on every instance and worker
that serves the export, whenever each loaded it, so they all answer with the same bytes and ETag.
Solution bodies (too short to gain) are held raw. A pack's structure is checked before a pool serves it
(``sudokupool.pool.validate``); each body is inflated and checked once, before it is first sent
(:meth:`Pool.gzip_body`), the only state a pool changes.

Memory: the pool holds no Python object per puzzle. Bodies, ids, the id index and the per-difficulty
lists are slices of the mapping, so workers on one machine that map the same pack share one copy in the
page cache, and an old pool's mapping goes when the last request that holds the pool is done with it.
"""

from __future__ import annotations

import itertools
import logging
import mmap
import random
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, Final, cast
from zlib import crc32

import orjson
from isal import isal_zlib

from sudokupool.config import Settings
from sudokupool.pool import pack
from sudokupool.pool.checked import Checked, Copy
from sudokupool.pool.choose import Choices, Filters
from sudokupool.pool.gzip_member import HEADER, HEADER_SIZE, final_block, stored_block, trailer
from sudokupool.pool.validate import longest_run, validate
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.ids import normalise_id

SOLUTION_WIDTH: Final = pack.SOLUTION_WIDTH
_SOLUTION_AT: Final = SOLUTION_WIDTH - 81 - 2
_ETAG_BYTES: Final = pack.ETAG_WIDTH
MAX_RECORD_BYTES: Final = Settings.max_record_bytes
_GZIP_WBITS: Final = 31
# isal's stub declares ``error`` as an instance of Exception; it is the class.
_INFLATE_ERROR: Final = cast("type[Exception]", isal_zlib.error)
#: How every record's body starts (``Record``'s first fields), up to the id, puzzle id and grid of its own.
_BODY_START: Final = b'{"canonical_id":"'
_BODY_PUZZLE_ID: Final = b'","puzzle_id":"'
_BODY_GRID: Final = b'","puzzle":"'
_ID_AT: Final = len(_BODY_START)
_PUZZLE_ID_AT: Final = _ID_AT + pack.ID_WIDTH + len(_BODY_PUZZLE_ID)
_GRID_AT: Final = _PUZZLE_ID_AT + pack.ID_WIDTH + len(_BODY_GRID)
#: Records :meth:`Pool.verify` checks between two looks at the clock.
_VERIFY_STEP: Final = 64

logger = logging.getLogger("sudokupool.pool")


class DamagedRecord(Exception):
    """A record whose body does not inflate to what its pack records for it (a crafted or damaged pack
    that passed validation, which does not inflate bodies)."""

    def __init__(self, index: int) -> None:
        super().__init__(f"puzzle {index}'s record is damaged")
        self.index = index


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

    def __init__(self, data: mmap.mmap, header: pack.PackHeader, info: PoolInfo, *, probes: int) -> None:
        """A pool over ``data``, a pack already checked (:func:`sudokupool.pool.pack.check`) and validated
        (:func:`sudokupool.pool.validate.validate`, which gives ``probes``: the most id-table slots a
        lookup reads)."""
        self.info = info
        self._probes = range(probes)
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
        self._levels = items("levels")
        self._stars = items("stars")
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
        #: A bit per record, set once it is inflated and found to be what the pack records (a bit, not a
        #: byte: 125 KB of each worker's private memory for 1M records, not 1 MB); the records found not to be.
        self._verified = bytearray((header.count + 7) // 8)
        self._damaged: set[int] = set()
        #: The cache directory's file this pool maps, where its checks are recorded (:meth:`from_pack`).
        self.copy: Copy | None = None
        stats = {"total": header.count, "by_difficulty": self._counts, "last_synced_at": synced_at}
        self.stats_body = orjson.dumps(stats)

    @classmethod
    def from_pack(
        cls,
        data: mmap.mmap,
        info: PoolInfo,
        *,
        max_record_bytes: int = MAX_RECORD_BYTES,
        background: bool = False,
        copy: Copy | None = None,
    ) -> Pool:
        """Check the mapped pack ``data`` (made from the export ``info`` names; ``background``: beside a
        serving loop, see :func:`~sudokupool.pool.pack.check`), validate its structure against
        ``max_record_bytes`` (``SUDOKUPOOL_MAX_RECORD_BYTES``) and serve it. Raise
        :class:`~sudokupool.pool.pack.PackError`.

        A ``copy`` (the cache directory's file ``data`` maps) whose checks are recorded is not validated
        again, nor its bodies when they were all checked; the checksum is, which also reads every page in."""
        header = pack.check(data, export_name=info.export_key, export_size=info.export_size, background=background)
        checked = copy.recall() if copy is not None else None
        if checked is None:
            with memoryview(data) as view:
                probes = validate(view, header, max_record_bytes=max_record_bytes, background=background)
            checked = Checked(probes)
            if copy is not None:
                copy.record(checked)
        pool = cls(data, header, info, probes=checked.probes)
        pool.copy = copy
        if checked.bodies:
            pool._all_checked()
        return pool

    def _all_checked(self) -> None:
        """Mark every body as inflated and found to be its record."""
        self._verified[:] = b"\xff" * len(self._verified)

    @property
    def all_verified(self) -> bool:
        """Whether every body has been inflated and found to be its record."""
        whole, rest = divmod(self._count, 8)
        done = self._verified
        return done.count(255, 0, whole) == whole and (not rest or done[whole] & (1 << rest) - 1 == (1 << rest) - 1)

    def record_verified(self) -> None:
        """Record, beside the copy this pool maps, that every body was found to be its record, so that the
        next load of that copy does not inflate them all again (:meth:`verify`)."""
        if self.copy is not None and self.all_verified:
            self.copy.record(Checked(len(self._probes), bodies=True))

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
        # Bounded by the longest run of filled slots (validated), whatever the table holds.
        for _ in self._probes:
            number = table[slot]
            if not number:
                return None
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

    def _member(self, index: int) -> bytes:
        at = self._bodies_at
        crc, length = self._check(index)
        start, end = at + self._offsets[index], at + self._offsets[index + 1]
        return b"".join((self._data[start:end], self._tail_block, trailer(crc, length)))

    def _inflate(self, index: int, member: bytes) -> bytes:
        """The body ``member`` (record ``index``'s) holds, inflated no further than the length the pack
        records for it (at most ``SUDOKUPOOL_MAX_RECORD_BYTES``, validated). A member that holds more, or
        other bytes than its CRC-32 says, or a body that does not start with its record's id, puzzle id
        and grid, raises :class:`DamagedRecord` (logged once), whatever it would inflate to."""
        if index in self._damaged:
            raise DamagedRecord(index)
        length = self._check(index)[1]
        inflater = isal_zlib.decompressobj(_GZIP_WBITS)
        try:
            body = inflater.decompress(member, length + 1)
        except _INFLATE_ERROR:  # the CRC-32 or length in the trailer does not match what was inflated
            body = b""
        data, ids_at, puzzles_at = self._data, self._ids_at + pack.ID_WIDTH * index, self._puzzles_at
        grid_at = puzzles_at + pack.GRID_WIDTH * index
        if (
            len(body) != length
            or not inflater.eof
            or body[:_ID_AT] != _BODY_START
            or body[_ID_AT : _ID_AT + pack.ID_WIDTH] != data[ids_at : ids_at + pack.ID_WIDTH]
            or body[_PUZZLE_ID_AT - len(_BODY_PUZZLE_ID) : _PUZZLE_ID_AT] != _BODY_PUZZLE_ID
            or body[_GRID_AT - len(_BODY_GRID) : _GRID_AT] != _BODY_GRID
            or body[_GRID_AT : _GRID_AT + pack.GRID_WIDTH] != data[grid_at : grid_at + pack.GRID_WIDTH]
        ):
            self._damaged.add(index)
            logger.warning("%s: puzzle %d's body is not the record its pack says it is", self, index)
            raise DamagedRecord(index)
        self._verified[index >> 3] |= 1 << (index & 7)
        return body

    def verify(self, *, pace: float = 0.0, stopped: threading.Event | None = None) -> int | None:
        """Inflate and check (as :meth:`gzip_body` does before a body is first sent) every record not
        checked yet; return the index of the first that fails, or None. Beside a serving loop (``pace``),
        it sleeps after each step ``pace`` times as long as the step took; it stops early, with None,
        once ``stopped`` is set."""
        started = time.perf_counter()
        for index in range(self._count):
            if not self._verified[index >> 3] >> (index & 7) & 1:
                try:
                    self._inflate(index, self._member(index))
                except DamagedRecord:
                    return index
            if index % _VERIFY_STEP == _VERIFY_STEP - 1:
                if stopped is not None and stopped.is_set():
                    return None
                if pace:
                    time.sleep((time.perf_counter() - started) * pace)
                    started = time.perf_counter()
        return None

    def gzip_body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index`` as one gzip member; raise :class:`DamagedRecord`
        when it does not inflate to what the pack records. A member is inflated (once per process) before
        it is first sent: what a client inflates is then what was checked."""
        member = self._member(index)
        if not self._verified[index >> 3] >> (index & 7) & 1:
            self._inflate(index, member)
        return member

    def joined_member(self, indexes: list[int], head: bytes, separator: bytes, end: bytes) -> bytes:
        """One gzip member of ``head``, the records ``indexes`` with ``separator`` between them, and ``end``
        (each of these under 64 KiB): a set's body, made without inflating or deflating a record.

        Each record's deflate blocks are copied from the pack as they are (they end on a sync flush, byte
        aligned, and hold no final block), its tail and ``separator`` go in a stored block, and the CRC-32 of
        the whole is combined from each record's (ISA-L's ``crc32_combine``). Each record is checked as
        :meth:`gzip_body` checks it before it is first sent; one whose gzip header is not the plain 10 bytes
        the pack writer makes raises :class:`DamagedRecord`."""
        data, at, tail = self._data, self._bodies_at, self._tail
        parts = [HEADER, stored_block(head)]
        crc, length = isal_zlib.crc32(head), len(head)
        last = len(indexes) - 1
        for k, index in enumerate(indexes):
            start, stop = at + self._offsets[index], at + self._offsets[index + 1]
            if not self._verified[index >> 3] >> (index & 7) & 1:
                self._inflate(index, self._member(index))
            if data[start : start + HEADER_SIZE] != HEADER:
                self._damaged.add(index)
                raise DamagedRecord(index)
            parts.append(data[start + HEADER_SIZE : stop])
            between = tail if k == last else tail + separator
            parts.append(stored_block(between))
            record_crc, record_length = self._check(index)
            crc = isal_zlib.crc32_combine(crc, record_crc, record_length)
            length += record_length
            if k != last:
                crc = isal_zlib.crc32(separator, crc)
                length += len(separator)
        parts.append(stored_block(end, final=True))
        parts.append(trailer(isal_zlib.crc32(end, crc), length + len(end)))
        return b"".join(parts)

    def body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index``, inflated; raise :class:`DamagedRecord` (see
        :meth:`gzip_body`)."""
        member = self._member(index)
        if self._verified[index >> 3] >> (index & 7) & 1:
            # Inflated once already to exactly its recorded length, from bytes of the service's own mapping.
            return isal_zlib.decompress(member, _GZIP_WBITS, self._check(index)[1])
        return self._inflate(index, member)

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

    def deal(self, filters: Filters, seed: int, offset: int, count: int) -> tuple[list[int], int]:
        """Puzzles ``offset`` to ``offset + count - 1`` of the order ``seed`` (0 to 2**64 - 1) gives those
        matching ``filters``, and how many match (:meth:`Choices.deal`)."""
        return self.choices.deal(filters, seed, offset, count)

    def canonical_id(self, index: int) -> str:
        """The share code of puzzle ``index``."""
        start = self._ids_at + pack.ID_WIDTH * index
        return self._data[start : start + pack.ID_WIDTH].decode()

    def level(self, index: int) -> int:
        """The difficulty level (1-4) of puzzle ``index``."""
        return self._levels[index]

    def stars(self, index: int) -> int | None:
        """The stars of puzzle ``index`` (None when it has none)."""
        return self._stars[index] or None

    def daily(self, day: int, level: int | None = None) -> int | None:
        """The puzzle of the day ``day`` (days since 1970-01-01, UTC), of difficulty ``level`` (1-4) or any:
        the same on every instance that serves this export (:meth:`Choices.daily`)."""
        return self.choices.daily(day, level, self._by_level)

    def daily_matching(self, day: int, filters: Filters) -> int | None:
        """The puzzle of the day ``day`` among those matching ``filters`` (:meth:`Choices.daily_matching`)."""
        return self.choices.daily_matching(day, filters)

    def listed(self, difficulty: str) -> bytes:
        """The indexes of the puzzles of ``difficulty``, in order, as the pack holds them (``check``)."""
        return self._by_difficulty[difficulty].tobytes()

    def filled_slots(self) -> int:
        """How many slots of the id table hold a puzzle (``check``)."""
        return len(self._table) - self._table.tolist().count(0)


class PoolBuilder(pack.PackWriter):
    """Writes records (:meth:`~sudokupool.pool.pack.PackWriter.add`) into a pack in ``file`` (default: an
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
        offset, length = header.sections["table"]
        probes = longest_run(data[offset : offset + length]) + 1  # this pack's own table: its runs are all to know
        info = PoolInfo(source, export_key, export_size, self.loaded_at, parsed=True, exported=self.exported)
        pool = Pool(data, header, info, probes=probes)
        # Bodies this process just made from validated records: none needs inflating before it is sent.
        pool._all_checked()
        return pool
