"""The in-memory pool: immutable indexes over prepared response bodies.

A :class:`Pool` is built once by a :class:`PoolBuilder` and never changed; a reload builds a new one and
the app swaps a single reference, so readers never see half a pool.

Memory: the pool keeps no Python object per puzzle except one dict entry in the id index. Every public
record body is serialized once at load and appended to one large ``bytes`` buffer, found by offset; the
solution bodies have a fixed width and live in a second buffer. ``orjson.dumps`` returns over-allocated
``bytes`` objects, so keeping them individually would cost several times the data.
"""

from __future__ import annotations

import hashlib
import random
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from sudokupool.export import DIFFICULTIES, PUBLIC_FIELD_NAMES
from sudokupool.sudoku.ids import normalise_id

_PUZZLE_AT: Final = len(b'{"canonical_id":"0123456789ABC","puzzle_id":"0123456789ABC","puzzle":"')
_SOLUTION_PREFIX: Final = b'{"canonical_id":"'
_SOLUTION_WIDTH: Final = len(b'{"canonical_id":"0123456789ABC","solution":"') + 81 + len(b'"}')
_SOLUTION_AT: Final = _SOLUTION_WIDTH - 81 - 2
_ETAG_BYTES: Final = 8


@dataclass(frozen=True)
class PoolInfo:
    """Where a pool came from: the export's key and size, and when it was loaded (seconds, UTC)."""

    source: str
    export_key: str
    export_size: int
    loaded_at: int


@dataclass(frozen=True, eq=False)
class Pool:
    """Immutable indexes over prepared bodies. Build it with :class:`PoolBuilder`."""

    info: PoolInfo
    _ids: Mapping[str, int]
    _bodies: bytes
    _offsets: array[int]
    _solutions: bytes
    _etags: bytes
    _by_difficulty: Mapping[str, array[int]]
    stats_body: bytes
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def find(self, canonical_id: str) -> int | None:
        """The index of the puzzle with this id (case-insensitive), or None."""
        index = self._ids.get(canonical_id)
        if index is None:
            # Share codes are case-insensitive and accept Crockford's look-alikes (I, L, O).
            normal = normalise_id(canonical_id)
            if normal is not None:
                index = self._ids.get(normal)
        return index

    def body(self, index: int) -> bytes:
        """The public record (JSON) of puzzle ``index``."""
        return self._bodies[self._offsets[index] : self._offsets[index + 1]]

    def solution_body(self, index: int) -> bytes:
        """The SolutionResponse (JSON) of puzzle ``index``."""
        start = index * _SOLUTION_WIDTH
        return self._solutions[start : start + _SOLUTION_WIDTH]

    def etag(self, index: int, *, solution: bool = False) -> str:
        """The weak ETag of the public record (or of the solution body)."""
        start = (2 * index + solution) * _ETAG_BYTES
        return f'W/"{self._etags[start : start + _ETAG_BYTES].hex()}"'

    def puzzle(self, index: int) -> str:
        """The puzzle grid (81 characters) of puzzle ``index``."""
        start = self._offsets[index] + _PUZZLE_AT
        return self._bodies[start : start + 81].decode()

    def solution(self, index: int) -> str:
        """The solution grid (81 digits) of puzzle ``index``."""
        start = index * _SOLUTION_WIDTH + _SOLUTION_AT
        return self._solutions[start : start + 81].decode()

    def pick(self, difficulty: str | None = None) -> int | None:
        """A uniformly random puzzle, of one difficulty (a capitalised name) or of the whole pool.

        Uniform over the whole pool is the same as weighting difficulties by the pool's mix.
        """
        if difficulty is None:
            count = len(self)
            return self._rng.randrange(count) if count else None
        indexes = self._by_difficulty.get(difficulty)
        if not indexes:
            return None
        return indexes[self._rng.randrange(len(indexes))]

    def count(self, difficulty: str) -> int:
        return len(self._by_difficulty.get(difficulty, ()))


class PoolBuilder:
    """Collects validated records (from :func:`sudokupool.export.parse_record`) into a :class:`Pool`.

    ``synced_at`` of every record is replaced with the load time, so clients see when their
    instance last synced.
    """

    def __init__(self, *, loaded_at: int) -> None:
        self.loaded_at = loaded_at
        self._ids: dict[str, int] = {}
        self._bodies = bytearray()
        self._offsets = array("Q", [0])
        self._solutions = bytearray()
        self._etags = bytearray()
        self._by_difficulty: dict[str, array[int]] = {name: array("I") for name in DIFFICULTIES}

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, canonical_id: str) -> bool:
        return canonical_id in self._ids

    def add(self, record: dict[str, Any]) -> None:
        """Add one validated record; its ``canonical_id`` must not be in the pool yet."""
        canonical_id: str = record["canonical_id"]
        index = len(self._ids)
        public = {name: record[name] for name in PUBLIC_FIELD_NAMES}
        public["synced_at"] = self.loaded_at
        body = orjson.dumps(public)
        solution = b'%s%s","solution":"%s"}' % (_SOLUTION_PREFIX, canonical_id.encode(), record["solution"].encode())
        self._ids[canonical_id] = index
        self._bodies += body
        self._offsets.append(len(self._bodies))
        self._solutions += solution
        self._etags += hashlib.blake2b(body, digest_size=_ETAG_BYTES).digest()
        self._etags += hashlib.blake2b(solution, digest_size=_ETAG_BYTES).digest()
        self._by_difficulty[record["difficulty"]].append(index)

    def build(self, *, source: str, export_key: str, export_size: int) -> Pool:
        """The finished, immutable pool."""
        info = PoolInfo(source=source, export_key=export_key, export_size=export_size, loaded_at=self.loaded_at)
        stats = {
            "total": len(self._ids),
            "by_difficulty": {name: len(self._by_difficulty[name]) for name in DIFFICULTIES},
            "last_synced_at": self.loaded_at,
        }
        return Pool(
            info=info,
            _ids=self._ids,
            _bodies=bytes(self._bodies),
            _offsets=self._offsets,
            _solutions=bytes(self._solutions),
            _etags=bytes(self._etags),
            _by_difficulty=self._by_difficulty,
            stats_body=orjson.dumps(stats),
        )
