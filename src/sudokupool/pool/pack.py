"""The pool pack: an export's prepared bodies and indexes in one checksummed file, served through mmap.

A pack sits beside the export it was made from (``pool-<ts>.pack`` beside ``pool-<ts>.ndjson[.gz]``) and
records that export's name and size. Opening one is a map, a header check and a CRC-32 over the file:
no Python work per record. The id index is an open-addressing hash table inside the file, probed through
a ``memoryview``; nothing is built per process. The layout is documented in ``docs/export-format.md``
("The pool pack"); this module is its one implementation.
"""

from __future__ import annotations

import itertools
import math
import mmap
import secrets
import struct
import sys
import time
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Final, NamedTuple
from zlib import adler32, crc32

import msgspec
from isal import isal_zlib

from sudokupool.pool.export import DIFFICULTY_LEVEL, Record
from sudokupool.pool.gzip_member import open_member
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES
from sudokupool.sudoku.technique_table import TECHNIQUES

MAGIC: Final = b"SUDOKUPK"
VERSION: Final = 4
HEADER_SIZE: Final = 1024
#: Every section starts at a multiple of this, so a section can be cast to an array of its items.
ALIGN: Final = 64
ID_WIDTH: Final = 13
GRID_WIDTH: Final = 81
ETAG_WIDTH: Final = 8
#: Bytes of a record's ``SolutionResponse`` body, ``{"canonical_id":"…","solution":"…"}``.
SOLUTION_WIDTH: Final = len(b'{"canonical_id":"0123456789ABC","solution":"') + 81 + len(b'"}')
#: The sections the filters of ``random`` and the puzzle of the day read: the file's last ones.
FILTER_SECTIONS: Final = (
    "stars",
    "scores",
    "technique_sets",
    "used_at",
    "technique_table",
    "choices",
    "schedule",
    "clues",
    "symmetries",
    "clue_choices",
)
#: The sections, in file order after the header. ``bodies`` is written first, as records arrive.
SECTIONS: Final = (
    "bodies",
    "offsets",
    "ids",
    "table",
    "levels",
    "by_difficulty",
    "checks",
    "solutions",
    "etags",
    "puzzles",
    *FILTER_SECTIONS,
)
#: The choices' lists of one group: one per difficulty and number of stars (0 for none, then 1 to 5).
STAR_SLOTS: Final = 6
LISTS_PER_GROUP: Final = len(DIFFICULTIES) * STAR_SLOTS
#: The clue lists of one group: one per difficulty, number of stars and symmetry (``SYMMETRIES``' order).
CLUE_LISTS_PER_GROUP: Final = LISTS_PER_GROUP * len(SYMMETRIES)
#: ``used_at`` of a record that has none (never a time an export can hold: see :meth:`PackWriter.add`).
NO_USED_AT: Final = -(1 << 63)
#: A technique set is a u64 bitmask over the pack's technique table.
MAX_TECHNIQUES: Final = 64
#: Bytes per record of ``checks``: the CRC-32 and length of the body the record's gzip member holds so far.
CHECK_WIDTH: Final = 8
_SYMMETRY_CODES: Final = {name: code for code, name in enumerate(SYMMETRIES)}
#: magic, version, header size, records, table slots, solution width, export size, made at, the id table's
#: key, the four difficulty counts, (offset, length) per section, export name length and name, then the
#: two CRC-32s.
_HEADER: Final = struct.Struct(f"<8sIIIIIQQ16s4I{2 * len(SECTIONS)}QH256sII")
_CRC_AT: Final = _HEADER.size - 8
_NAME_MAX: Final = 256
#: Bytes the checksum of a live swap reads at a time, a small part of the L3 cache, and how many times as
#: long as a slice took it then sleeps: 7 keeps the check to an eighth of one core (docs/benchmarks.md,
#: "Swap under load").
_SLICE: Final = 2 << 20
PACE: Final = 7
_encode: Final = msgspec.json.Encoder().encode
#: Bodies the writer joins into one write: a write and a checksum call per body made a parse 3 % slower.
_BATCH: Final = 256


class PackError(Exception):
    """A pack that cannot be used: damaged, of another version, or made from another export."""


class Technique(NamedTuple):
    """A row of a pack's technique table: a technique the grader knows, the difficulty level (1-4) its use
    implies, and the score of one step of it."""

    name: str
    level: int
    score: int


def technique_table() -> tuple[Technique, ...]:
    """The grader's techniques, in its table's order: bit ``i`` of a pack's technique sets is row ``i``."""
    table = tuple(Technique(technique.name, technique.level, technique.score) for technique in TECHNIQUES)
    assert len(table) <= MAX_TECHNIQUES, "a technique set is a u64"
    return table


def slot_of(canonical_id: str, key: int, slots: int) -> int:
    """The first table slot probed for ``canonical_id`` (13 upper-case Crockford characters), in a table
    of ``slots`` (a power of two) with the random odd 128-bit ``key`` its pack was made with.

    The id read as a base-36 number (under 2**68), hashed by multiply-shift (Dietzfelbinger et al.):
    the top bits of ``key * id`` modulo 2**128. Ids are SHA-256 bits when an export is made as
    documented, but the loader only checks their spelling, so an export could choose ids that share
    their low bits; no choice of ids made without the key (drawn when the pack is made) collides more
    than random ones do. About 0.1 us a lookup.
    """
    bits = slots.bit_length() - 1
    return (key * int(canonical_id, 36) >> (128 - bits)) & (slots - 1)


def _file_name(export_key: str) -> str:
    return export_key.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class PackHeader:
    """A pack's header: what :func:`read_header` reads and :meth:`to_bytes` writes."""

    count: int
    slots: int
    solution_width: int
    export_size: int
    made_at: int
    table_key: int
    counts: tuple[int, ...]
    sections: dict[str, tuple[int, int]]
    export_name: str
    #: CRC-32 of every byte after the header.
    crc: int

    def to_bytes(self) -> bytes:
        name = self.export_name.encode()
        if len(name) > _NAME_MAX:
            raise ValueError(f"export name {self.export_name!r} is too long for a pack")
        key = self.table_key.to_bytes(16, "little")
        numbers = (self.count, self.slots, self.solution_width, self.export_size, self.made_at, key, *self.counts)
        places = (value for section in SECTIONS for value in self.sections[section])
        blank = _HEADER.pack(MAGIC, VERSION, HEADER_SIZE, *numbers, *places, len(name), name, 0, 0)
        blank += bytes(HEADER_SIZE - len(blank))
        return blank[:_CRC_AT] + struct.pack("<II", self.crc, isal_zlib.crc32(blank)) + blank[_CRC_AT + 8 :]


class PackWriter:
    """Writes the pack of the records :meth:`add` ed to ``file`` (opened for writing and reading, at position
    0): bodies as they come, the small columns and the indexes at :meth:`finish`."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.ids: dict[str, None] = {}
        self._offsets = array("Q", [0])
        self._levels = bytearray()
        self._stars = bytearray()
        self._scores = array("d")
        self._sets = array("Q")
        self._used = array("q")
        self._clues = bytearray()
        self._symmetries = bytearray()
        self.technique_table = technique_table()
        self._bits = {row.name: 1 << bit for bit, row in enumerate(self.technique_table)}
        self._checks = bytearray()
        self._solutions = bytearray()
        self._etags = bytearray()
        self._puzzles = bytearray()
        self._pending: list[bytes] = []
        self._crc = 0
        file.write(bytes(HEADER_SIZE))

    def add(self, record: Record) -> bool:
        """Serialize and compress one validated record into the pack; False (nothing added) when its
        ``canonical_id`` was added before.

        Its body is the record without ``synced_at`` and ``solution`` (its last two fields, cut from its
        JSON: the key ``"synced_at":`` can only be the key, as a quote in a string is escaped), as an open
        gzip member (the pool ends it when it serves it); its ETag is that member's trailer, one for both
        encodings; a solution's is CRC-32 and Adler-32 of its body. A weak validator only has to change
        when the body does, and these take half the time of the shortest BLAKE2b.
        """
        canonical_id = record.canonical_id
        if canonical_id in self.ids:
            return False
        encoded = _encode(record)
        raw = encoded[: encoded.rfind(b',"synced_at":')]
        solution = b'{"canonical_id":"%s","solution":"%s"}' % (canonical_id.encode(), record.solution.encode())
        self.ids[canonical_id] = None
        self._levels.append(DIFFICULTY_LEVEL[record.difficulty])
        self._checks += struct.pack("<II", crc32(raw), len(raw))
        self._solutions += solution
        self._etags += (crc32(solution) << 32 | adler32(solution)).to_bytes(ETAG_WIDTH)
        self._puzzles += record.puzzle.encode()
        self._add_filters(record)
        self._pending.append(open_member(raw))
        self._offsets.append(self._offsets[-1] + len(self._pending[-1]))
        if len(self._pending) == _BATCH:
            self._write(b"".join(self._pending))
            self._pending.clear()
        return True

    def _add_filters(self, record: Record) -> None:
        """Keep what the filters of ``random`` and the daily puzzle read: stars, score, technique set, used_at,
        clue count and symmetry."""
        self._stars.append(record.stars or 0)
        self._clues.append(record.clue_count)
        self._symmetries.append(_SYMMETRY_CODES[record.symmetry])
        score = record.score
        # -inf sorts a record without a score before every other, where no score range reaches it.
        self._scores.append(-math.inf if score is None else float(score))
        bits, mask = self._bits, 0
        for name in record.techniques:
            mask |= bits.get(name, 0)
        self._sets.append(mask)
        used = record.used_at
        # An export's integers reach 2**64 - 1; a time past the i64 range is a day no date reaches anyway.
        self._used.append(NO_USED_AT if used is None else max(NO_USED_AT + 1, min(used, (1 << 63) - 1)))

    def _grouped(
        self, slots: Iterable[int], per_group: int, key: Callable[[int], float | tuple[int, float]]
    ) -> list[array[int]]:
        """A section of lists of record numbers, ``per_group`` lists to a group (its lengths, then its lists):
        record ``n`` in the list of group 0 that is the ``n``-th of ``slots``, and in that of group ``t + 1`` for
        each technique ``t`` of its set; each list sorted by ``key``."""
        sets = self._sets
        lists = [array("I") for _ in range((1 + len(self.technique_table)) * per_group)]
        for number, at in enumerate(slots):
            lists[at].append(number)
            mask = sets[number]
            while mask:
                low = mask & -mask
                lists[per_group * low.bit_length() + at].append(number)
                mask ^= low
        # Each list sorted on its own (a stable sort: equal keys stay in record order), so the sort's keys
        # are those of one list at a time, not the whole pool's: sorting them all at once took 150 MB more
        # at the peak for 1M records.
        for i, numbers in enumerate(lists):
            if len(numbers) > 1:
                lists[i] = array("I", sorted(numbers, key=key))
        return [array("I", (len(numbers) for numbers in lists)), *lists]

    def _choices(self) -> list[array[int]]:
        """The ``choices`` section: the lists of :meth:`_grouped` by difficulty and stars, ascending by score."""
        slots = ((level - 1) * STAR_SLOTS + stars for level, stars in zip(self._levels, self._stars, strict=True))
        return self._grouped(slots, LISTS_PER_GROUP, self._scores.__getitem__)

    def _clue_choices(self) -> list[array[int]]:
        """The ``clue_choices`` section: as ``choices``, with each group's lists also split by symmetry, each
        list ascending by clue count, then by score."""
        kinds = len(SYMMETRIES)
        slots = (
            ((level - 1) * STAR_SLOTS + stars) * kinds + symmetry
            for level, stars, symmetry in zip(self._levels, self._stars, self._symmetries, strict=True)
        )
        clues, scores = self._clues, self._scores

        def key(number: int) -> tuple[int, float]:
            return clues[number], scores[number]

        return self._grouped(slots, CLUE_LISTS_PER_GROUP, key)

    def _schedule(self) -> list[array[int]]:
        """The ``schedule`` section (its lengths, then its lists): the records with a ``used_at``, by
        difficulty, ascending by it."""
        used, levels = self._used, self._levels
        by_level = [array("I") for _ in DIFFICULTIES]
        for number, at in enumerate(used):
            if at != NO_USED_AT:
                by_level[levels[number] - 1].append(number)
        by_level = [array("I", sorted(numbers, key=used.__getitem__)) for numbers in by_level]
        return [array("I", (len(numbers) for numbers in by_level)), *by_level]

    def _write(self, data: bytes | bytearray | memoryview | array[int]) -> None:
        self._crc = isal_zlib.crc32(data, self._crc)
        self.file.write(data)

    def finish(self, *, export_name: str, export_size: int, made_at: int) -> PackHeader:
        """Write the indexes and the header; return the header."""
        self._write(b"".join(self._pending))
        count = len(self.ids)
        slots = 8
        while slots < 2 * count:
            slots *= 2
        key = secrets.randbits(128) | 1
        table = array("I", bytes(4 * slots))
        for number, canonical_id in enumerate(self.ids, 1):
            slot = slot_of(canonical_id, key, slots)
            while table[slot]:
                slot = (slot + 1) & (slots - 1)
            table[slot] = number
        by_level: list[array[int]] = [array("I") for _ in DIFFICULTIES]
        for number, level in enumerate(self._levels):
            by_level[level - 1].append(number)
        # A section is one buffer, or a function that makes its parts when it is written (so that no two
        # large ones are held at once).
        columns: dict[str, bytes | bytearray | memoryview | Callable[[], list[array[int]]]] = {
            "offsets": self._offsets.tobytes(),
            "ids": "".join(self.ids).encode(),
            "table": table.tobytes(),
            "levels": self._levels,
            "by_difficulty": b"".join(indexes.tobytes() for indexes in by_level),
            "checks": self._checks,
            "solutions": self._solutions,
            "etags": self._etags,
            "puzzles": self._puzzles,
            "stars": self._stars,
            "scores": memoryview(self._scores).cast("B"),
            "technique_sets": memoryview(self._sets).cast("B"),
            "used_at": memoryview(self._used).cast("B"),
            "technique_table": "".join(
                f"{name}\t{level}\t{score}\n" for name, level, score in self.technique_table
            ).encode(),
            "choices": self._choices,
            "schedule": self._schedule,
            "clues": self._clues,
            "symmetries": self._symmetries,
            "clue_choices": self._clue_choices,
        }
        sections = {"bodies": (HEADER_SIZE, self._offsets[-1])}
        for section, data in columns.items():
            self._write(bytes(-self.file.tell() % ALIGN))
            start = self.file.tell()
            for part in data() if callable(data) else [data]:
                self._write(part)
            sections[section] = (start, self.file.tell() - start)
        counts = tuple(len(indexes) for indexes in by_level)
        name = _file_name(export_name)
        header = PackHeader(count, slots, SOLUTION_WIDTH, export_size, made_at, key, counts, sections, name, self._crc)
        self.file.seek(0)
        self.file.write(header.to_bytes())
        self.file.flush()
        return header


def restamp(path: Path, *, export_name: str, export_size: int) -> None:
    """Make the pack at ``path`` name another export of the same records (``publish`` uploads an export
    under a new name, and gzipped): only the header changes. Raise :class:`PackError` if it is not a pack."""
    with open(path, "r+b") as file:
        header = read_header(file.read(HEADER_SIZE), path.stat().st_size)
        file.seek(0)
        file.write(replace(header, export_name=_file_name(export_name), export_size=export_size).to_bytes())


def read_header(data: bytes | mmap.mmap | memoryview, size: int) -> PackHeader:
    """Parse and check the header of a pack of ``size`` bytes (not its checksum over the rest)."""
    if size < HEADER_SIZE:
        raise PackError(f"{size} bytes, shorter than a pack header")
    raw = bytes(data[:HEADER_SIZE])
    if raw[:8] != MAGIC:
        raise PackError("not a pack (wrong magic bytes)")
    _, version, _, count, slots, width, export_size, made_at, key, *rest = _HEADER.unpack_from(raw)
    if version != VERSION:
        raise PackError(f"pack format version {version}, this service reads version {VERSION}")
    counts, places, (name_length, name, crc, header_crc) = tuple(rest[:4]), rest[4:-4], rest[-4:]
    if isal_zlib.crc32(raw[:_CRC_AT] + bytes(8) + raw[_CRC_AT + 8 :]) != header_crc:
        raise PackError("header checksum mismatch (damaged)")
    sections = {section: (places[2 * i], places[2 * i + 1]) for i, section in enumerate(SECTIONS)}
    expected = {
        "offsets": 8 * (count + 1),
        "ids": ID_WIDTH * count,
        "table": 4 * slots,
        "levels": count,
        "by_difficulty": 4 * count,
        "checks": CHECK_WIDTH * count,
        "solutions": width * count,
        "etags": ETAG_WIDTH * count,
        "puzzles": GRID_WIDTH * count,
        "stars": count,
        "scores": 8 * count,
        "technique_sets": 8 * count,
        "used_at": 8 * count,
        "clues": count,
        "symmetries": count,
    }
    for section, (offset, length) in sections.items():
        if offset % ALIGN or offset < HEADER_SIZE:
            raise PackError(f"section {section} is misplaced (damaged header)")
        if offset + length > size:
            raise PackError(f"truncated: {size} bytes, but section {section} ends at byte {offset + length}")
        if section in expected and length != expected[section]:
            raise PackError(f"section {section} has {length} bytes, not {expected[section]}")
    placed = sorted(sections.values())
    for (offset, length), (following, _) in itertools.pairwise(placed):
        if offset + length > following:
            raise PackError("sections overlap (damaged header)")
    table_key = int.from_bytes(key, "little")
    if sum(counts) != count or slots & (slots - 1) or slots < 2 * count or not table_key & 1:
        raise PackError("inconsistent counts")
    export_name = name[:name_length].decode(errors="replace")
    return PackHeader(count, slots, width, export_size, made_at, table_key, counts, sections, export_name, crc)


def map_file(path: str | Path | int) -> mmap.mmap:
    """Map ``path`` (or an open file descriptor) read-only. Raise :class:`PackError` when it cannot be
    opened or is empty."""
    try:
        if isinstance(path, int):
            return mmap.mmap(path, 0, access=mmap.ACCESS_READ)
        with open(path, "rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise PackError(f"cannot map it ({getattr(exc, 'strerror', None) or exc})") from None


def check(data: mmap.mmap, *, export_name: str, export_size: int, background: bool = False) -> PackHeader:
    """Check the header, the checksum over the whole file and the export it was made from.

    Raise :class:`PackError` naming the first problem. The checksum reads every page once, which also
    brings the file into the page cache and maps every page before it is served. In the ``background``
    (a live swap, beside the serving loop) it reads a slice at a time and sleeps after each seven times
    as long as the slice took: requests keep their latency (read in one go, or in 16 MiB slices a
    quarter of the time, the check still made p99 during back-to-back swaps 1.6-2x steady at half the
    saturated rate, while the caches the serving thread works from were being flushed).
    """
    if sys.byteorder != "little":
        raise PackError("this host is big-endian; packs are read in place as little-endian integers")
    size = len(data)
    header = read_header(data, size)
    if header.export_name != _file_name(export_name):
        raise PackError(f"made from {header.export_name}, not {_file_name(export_name)}")
    if header.export_size != export_size:
        raise PackError(f"made from an export of {header.export_size} bytes, not {export_size}")
    with memoryview(data) as view:
        # ISA-L's crc32 lets go of the GIL while it runs, and takes a quarter to a third of zlib's CPU.
        crc, step = 0, _SLICE if background else size
        for at in range(HEADER_SIZE, size, step):
            started = time.perf_counter()
            crc = isal_zlib.crc32(view[at : at + step], crc)
            if background:
                time.sleep((time.perf_counter() - started) * PACE)
    if crc != header.crc:
        raise PackError("checksum mismatch (damaged or truncated)")
    return header


def _section(data: mmap.mmap | bytes | memoryview, header: PackHeader, name: str) -> memoryview:
    offset, length = header.sections[name]
    return memoryview(data)[offset : offset + length]


def technique_rows(data: mmap.mmap | bytes | memoryview, header: PackHeader) -> list[Technique]:
    """The pack's technique table (UTF-8 lines of name, level and score, tab-separated): row ``i`` is bit
    ``i`` of a technique set and group ``i + 1`` of ``choices``. Raise :class:`PackError` when it is not one."""
    raw = bytes(_section(data, header, "technique_table"))
    rows: list[Technique] = []
    try:
        for line in raw.decode().splitlines():
            name, level, score = line.split("\t")
            if not name or not level.isdigit() or not 1 <= int(level) <= len(DIFFICULTIES) or not score.isdigit():
                raise ValueError
            rows.append(Technique(name, int(level), int(score)))
    except ValueError:  # UnicodeDecodeError is one
        raise PackError("technique table: a row is not a name, a level 1-4 and a score (damaged)") from None
    names = {row.name for row in rows}
    if len(rows) > MAX_TECHNIQUES or len(names) != len(rows):
        raise PackError("technique table: more than 64 rows, or a name twice (damaged)")
    return rows


def list_lengths(view: memoryview, lists: int, what: str) -> list[int]:
    """The lengths at the start of a section of ``lists`` u32 lists (lengths, then the record numbers of each
    list in turn); raise :class:`PackError` when they do not add up to the section's size."""
    if len(view) < 4 * lists:
        raise PackError(f"section {what} has {len(view)} bytes, too few for its {lists} lengths")
    lengths = view[: 4 * lists].cast("I").tolist()
    if 4 * (lists + sum(lengths)) != len(view):
        raise PackError(f"section {what}'s lengths do not add up to its size (damaged)")
    return lengths
