"""The in-memory pool: immutable indexes over prepared response bodies.

A :class:`Pool` is built once by a :class:`PoolBuilder` and never changed; a reload builds a new one and
the app swaps a single reference, so readers never see half a pool.

Memory: the pool keeps no Python object per puzzle except one dict entry in the id index. Records are
prepared in :class:`Part` s of a few hundred (one per chunk of the export, possibly in another process):
every public record body is serialized once, gzip-compressed (``compression.py``) and not kept raw, and
the compressed bodies of a part are joined into one exact-size ``bytes`` object, found by offset;
solution bodies (too short to gain from compression) have a fixed width. ``orjson.dumps`` returns
over-allocated ``bytes`` objects, so keeping them one by one would cost several times the data, and
joining all parts at the end would double the peak.

What a part holds per record, and so what a file of prepared parts would have to hold:

- the record's body as one gzip member: its trailer gives the identity body's length and CRC-32, and
  with them the record's weak ETag (``W/"<crc32><length>"``, in hex), one for both encodings;
- its solution body, raw, at a fixed width of ``_SOLUTION_WIDTH`` bytes, and that body's ETag (8 bytes);
- its ``canonical_id`` and difficulty level.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from zlib import adler32, crc32

import orjson

from sudokupool.compression import compress, identity_length, inflate, trailer_tag
from sudokupool.export import DIFFICULTIES, DIFFICULTY_LEVEL, PUBLIC_FIELD_NAMES
from sudokupool.sudoku.ids import normalise_id

_PUZZLE_AT: Final = len(b'{"canonical_id":"0123456789ABC","puzzle_id":"0123456789ABC","puzzle":"')
_SOLUTION_PREFIX: Final = b'{"canonical_id":"'
_SOLUTION_WIDTH: Final = len(b'{"canonical_id":"0123456789ABC","solution":"') + 81 + len(b'"}')
_SOLUTION_AT: Final = _SOLUTION_WIDTH - 81 - 2
_ETAG_BYTES: Final = 8
#: The id index has this many shards, less one (a power of two): see PoolBuilder. Shards are chosen by
#: ``hash()``, which differs between processes: a pool's index is built and used in one.
_SHARD_MASK: Final = 63
#: Records indexed between two turns of the event loop during a load (:meth:`PoolBuilder.adding`).
INDEX_STEP: Final = 256


@dataclass(frozen=True)
class PoolInfo:
    """Where a pool came from: the export's key and size, and when it was loaded (seconds, UTC)."""

    source: str
    export_key: str
    export_size: int
    loaded_at: int


@dataclass(frozen=True, eq=False, repr=False, slots=True)
class Part:
    """Prepared records of one chunk: gzip members joined, solutions and their ETags at fixed widths.

    Picklable, so worker processes can prepare parts while the event loop keeps serving. The ids are one
    string (split by :meth:`id_list`): a part then holds no container the cyclic garbage collector
    scans, where a list of ids per part made the first collection after a 1M load take 22 ms. Slots, no
    instance dict: every lookup reads a part's fields, and by id answered 1.044x as fast side by side
    (``python bench/ab.py`` against the class without slots, twice).
    """

    ids: str
    levels: bytes
    bodies: bytes
    ends: array[int]
    solutions: bytes
    etags: bytes

    def __len__(self) -> int:
        return len(self.levels)

    def id_list(self) -> list[str]:
        """The ``canonical_id`` of each record, in order."""
        return self.ids.split()

    def keeping(self, positions: Iterable[int]) -> Part:
        """A part of only the records at ``positions`` (in order): what is left of a part once the
        duplicates of records indexed before are dropped, so they cost no memory."""
        ids, ends, bodies, solutions, etags = self.id_list(), self.ends, self.bodies, self.solutions, self.etags
        kept_ids: list[str] = []
        levels = bytearray()
        kept_bodies: list[bytes] = []
        kept_solutions: list[bytes] = []
        kept_etags: list[bytes] = []
        kept_ends = array("I", [0])
        for position in positions:
            kept_ids.append(ids[position])
            levels.append(self.levels[position])
            kept_bodies.append(bodies[ends[position] : ends[position + 1]])
            kept_ends.append(kept_ends[-1] + ends[position + 1] - ends[position])
            kept_solutions.append(solutions[position * _SOLUTION_WIDTH : (position + 1) * _SOLUTION_WIDTH])
            kept_etags.append(etags[position * _ETAG_BYTES : (position + 1) * _ETAG_BYTES])  # the solution's
        return Part(
            ids=" ".join(kept_ids),
            levels=bytes(levels),
            bodies=b"".join(kept_bodies),
            ends=kept_ends,
            solutions=b"".join(kept_solutions),
            etags=b"".join(kept_etags),
        )

    # Not the generated repr: it would spell out every body. asyncio reprs a finished task's result
    # (a pool is one) and that alone tripled the peak memory of a load.
    def __repr__(self) -> str:
        return f"<Part of {len(self)} puzzles, {len(self.bodies)} bytes>"


def _etag(body: bytes) -> bytes:
    return (crc32(body) << 32 | adler32(body)).to_bytes(_ETAG_BYTES)


def prepare(records: Iterable[dict[str, Any]], loaded_at: int) -> Part:
    """Serialize and compress validated records into a :class:`Part`, consuming them.

    Each record must be as :func:`sudokupool.export.parse_record` returns it (the public fields in
    order, then ``solution``); ``solution`` is taken out of it and its ``synced_at`` is replaced with
    ``loaded_at``, so clients see when their instance last synced. Records are done with one at a time:
    given a generator, the loader parses each line into memory the last one freed, still in cache (17.4
    us a line, against 20 with a chunk's records held).

    A record's ETag is its gzip trailer (the body's CRC-32 and length), which costs nothing more; a
    solution's is CRC-32 and Adler-32 of its body (8 bytes). A weak validator only has to change when
    the body does: these take half the time of the shortest BLAKE2b, and computing CRC-32 and Adler-32
    of a full record took a third as long as compressing it. A changed record body of the same length
    keeps its ETag with a chance of one in 2**32 (the CRC-32 alone).
    """
    ids: list[str] = []
    levels = bytearray()
    bodies: list[bytes] = []
    solutions: list[bytes] = []
    etags: list[bytes] = []
    ends = array("I", [0])
    end = 0
    for record in records:
        canonical_id = record["canonical_id"]
        solution = b'%s%s","solution":"%s"}' % (
            _SOLUTION_PREFIX,
            canonical_id.encode(),
            record.pop("solution").encode(),
        )
        record["synced_at"] = loaded_at
        body = compress(orjson.dumps(record))
        bodies.append(body)
        solutions.append(solution)
        etags.append(_etag(solution))
        end += len(body)
        ends.append(end)
        ids.append(canonical_id)
        levels.append(DIFFICULTY_LEVEL[record["difficulty"]])
    return Part(
        ids=" ".join(ids),
        levels=bytes(levels),
        bodies=b"".join(bodies),
        ends=ends,
        solutions=b"".join(solutions),
        etags=b"".join(etags),
    )


@dataclass(frozen=True, eq=False, repr=False)
class Pool:
    """Immutable indexes over prepared bodies. Build it with :class:`PoolBuilder`."""

    info: PoolInfo
    _ids: tuple[dict[str, int], ...]
    _parts: tuple[Part, ...]
    _part_of: array[int]
    _local: array[int]
    _by_difficulty: Mapping[str, array[int]]
    stats_body: bytes
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def __len__(self) -> int:
        return len(self._part_of)

    def __repr__(self) -> str:
        # Short for the same reason as Part's.
        return f"<Pool of {len(self)} puzzles from {self.info.export_key}>"

    def find(self, canonical_id: str) -> int | None:
        """The index of the puzzle with this id (case-insensitive), or None."""
        index = self._ids[hash(canonical_id) & _SHARD_MASK].get(canonical_id)
        if index is None:
            # Share codes are case-insensitive and accept Crockford's look-alikes (I, L, O).
            normal = normalise_id(canonical_id)
            if normal is not None:
                index = self._ids[hash(normal) & _SHARD_MASK].get(normal)
        return index

    def gzip_body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index`` as it is held: one gzip member."""
        part = self._parts[self._part_of[index]]
        local = self._local[index]
        return part.bodies[part.ends[local] : part.ends[local + 1]]

    def body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index``, inflated."""
        return inflate(self.gzip_body(index))

    def body_length(self, index: int) -> int:
        """The length of :meth:`body` without inflating it."""
        part = self._parts[self._part_of[index]]
        end = part.ends[self._local[index] + 1]
        return identity_length(part.bodies[end - 4 : end])

    def solution_body(self, index: int) -> bytes:
        """The SolutionResponse (JSON) of puzzle ``index``."""
        start = self._local[index] * _SOLUTION_WIDTH
        return self._parts[self._part_of[index]].solutions[start : start + _SOLUTION_WIDTH]

    def etag(self, index: int, *, solution: bool = False) -> str:
        """The weak ETag of the public record, the same in every encoding (or of the solution body)."""
        part = self._parts[self._part_of[index]]
        local = self._local[index]
        if solution:
            start = local * _ETAG_BYTES
            return f'W/"{part.etags[start : start + _ETAG_BYTES].hex()}"'
        end = part.ends[local + 1]
        return f'W/"{trailer_tag(part.bodies[end - 8 : end])}"'

    def puzzle(self, index: int) -> str:
        """The puzzle grid (81 characters) of puzzle ``index``.

        Read from the inflated body: only the image path asks, and a render costs milliseconds.
        """
        return self.body(index)[_PUZZLE_AT : _PUZZLE_AT + 81].decode()

    def solution(self, index: int) -> str:
        """The solution grid (81 digits) of puzzle ``index``."""
        start = self._local[index] * _SOLUTION_WIDTH + _SOLUTION_AT
        return self._parts[self._part_of[index]].solutions[start : start + 81].decode()

    def pick(self, difficulty: str | None = None) -> int | None:
        """A uniformly random puzzle, of one difficulty (a capitalised name) or of the whole pool.

        Uniform over the whole pool is the same as weighting difficulties by the pool's mix.
        """
        if difficulty is None:
            count = len(self._part_of)
            return self._rng.randrange(count) if count else None
        indexes = self._by_difficulty.get(difficulty)
        if not indexes:
            return None
        return indexes[self._rng.randrange(len(indexes))]

    def count(self, difficulty: str) -> int:
        return len(self._by_difficulty.get(difficulty, ()))


class PoolBuilder:
    """Collects :class:`Part` s into a :class:`Pool`; a ``canonical_id`` seen before is skipped."""

    def __init__(self, *, loaded_at: int) -> None:
        self.loaded_at = loaded_at
        # The id index is split by hash into shards: a reload builds it on the serving event loop, and
        # growing one dict of a million ids rehashed it all at once (stalls of 15 to 40 ms). Measured
        # on the 1M bench export against one dict, in pairs: RSS 1.25x the served bytes, not 1.29x (32 MB
        # less), for 150 ns more per lookup in a loop (by id side by side: 1.007x, within noise).
        self._ids: tuple[dict[str, int], ...] = tuple({} for _ in range(_SHARD_MASK + 1))
        self._parts: list[Part] = []
        self._part_of = array("I")
        self._local = array("I")
        self._by_level: tuple[array[int], ...] = tuple(array("I") for _ in DIFFICULTIES)

    def __len__(self) -> int:
        return len(self._part_of)

    def __contains__(self, canonical_id: str) -> bool:
        return canonical_id in self._ids[hash(canonical_id) & _SHARD_MASK]

    def add_part(self, part: Part) -> list[int]:
        """Index the records of ``part``; return the positions (in the part) of duplicates, which are skipped."""
        duplicates: list[int] = []
        for found in self.adding(part, max(len(part), 1)):
            duplicates += found
        return duplicates

    def adding(self, part: Part, step: int = INDEX_STEP) -> Iterator[list[int]]:
        """:meth:`add_part` ``step`` records at a time, yielding the duplicates of each step.

        A live reload indexes on the serving event loop and gives the loop back between steps: a whole
        chunk of the 1M bench export (about 1,700 records) held it for 1.8 ms at the median, 4.5 ms at
        p99. That bound did not move the lag probe's p99 (docs/benchmarks.md, "Swap under load").
        """
        shards, part_of, local, by_level = self._ids, self._part_of, self._local, self._by_level
        number = len(self._parts)
        self._parts.append(part)
        ids, levels = part.id_list(), part.levels
        if len(ids) != len(levels):
            raise ValueError(f"a part of {len(levels)} records has {len(ids)} ids")
        first = len(part_of)
        compact = False
        for start in range(0, len(ids), step):
            duplicates = []
            index = len(part_of)
            for position in range(start, min(start + step, len(ids))):
                canonical_id = ids[position]
                # One lookup: setdefault answers the index already there for an id seen before.
                if shards[hash(canonical_id) & _SHARD_MASK].setdefault(canonical_id, index) != index:
                    duplicates.append(position)
                    continue
                part_of.append(number)
                local.append(position)
                by_level[levels[position] - 1].append(index)
                index += 1
            compact = compact or bool(duplicates)
            yield duplicates
        if compact:
            # Duplicates keep no bytes: the part shrinks to the records indexed (none: it goes).
            if first == len(part_of):
                self._parts.pop()
            else:
                self._parts[number] = part.keeping(local[first:])
                local[first:] = array("I", range(len(part_of) - first))

    def add(self, record: dict[str, Any]) -> None:
        """Add one validated record (a part of one); a duplicate ``canonical_id`` is skipped."""
        self.add_part(prepare([{name: record[name] for name in (*PUBLIC_FIELD_NAMES, "solution")}], self.loaded_at))

    def build(self, *, source: str, export_key: str, export_size: int) -> Pool:
        """The finished, immutable pool."""
        info = PoolInfo(source=source, export_key=export_key, export_size=export_size, loaded_at=self.loaded_at)
        by_difficulty = dict(zip(DIFFICULTIES, self._by_level, strict=True))
        stats = {
            "total": len(self._part_of),
            "by_difficulty": {name: len(indexes) for name, indexes in by_difficulty.items()},
            "last_synced_at": self.loaded_at,
        }
        return Pool(
            info=info,
            _ids=self._ids,
            _parts=tuple(self._parts),
            _part_of=self._part_of,
            _local=self._local,
            _by_difficulty=by_difficulty,
            stats_body=orjson.dumps(stats),
        )
