"""Which record of a pool holds a grid exactly as asked, without working out the grid's canonical form.

A grid sent in the layout the pool holds it in (a puzzle shared from the API and pasted back) is then a lookup
of about a microsecond, where its canonical search takes about as long as three whole requests by id. The
index is a table of record numbers (u32, 0 for an empty slot) probed linearly from the grid's hash, at least
twice as many slots as records (8 MiB a worker for a million records), and is this process's own: Python's
string hash differs from process to process, which is fine for a table that never leaves one.

It is built a chunk of records at each :meth:`GridIndex.find`, so that no request waits for the whole (a
million records take about a second); a grid not indexed yet is simply not found, and its caller searches as
it would without the index. A hit is checked against the record's grid, so a hash collision costs a probe.
"""

from __future__ import annotations

from array import array
from typing import Final, Protocol

#: Records indexed at each call of :meth:`GridIndex.find` until all are (about 2 ms of work: 0.85 µs a record).
CHUNK: Final = 2048


class Grids(Protocol):
    """What the index reads of a pool: its size and each record's grid."""

    def __len__(self) -> int: ...

    def puzzle(self, index: int) -> str: ...


class GridIndex:
    """The records of a pool of ``count`` records by their grid as the pool holds it (see the module docstring).

    The pool is passed to each call rather than kept, so that an index kept beside its pool (in a weak mapping,
    say) never keeps the pool alive."""

    def __init__(self, count: int, *, chunk: int = CHUNK) -> None:
        self._count = count
        slots = 1 << max(4, (2 * self._count).bit_length())
        self._mask = slots - 1
        self._table = array("I", bytes(4 * slots))
        self._done = 0
        self._chunk = chunk

    @property
    def complete(self) -> bool:
        """Whether every record is indexed."""
        return self._done == self._count

    def _build(self, pool: Grids) -> None:
        table, mask = self._table, self._mask
        end = min(self._count, self._done + self._chunk)
        for index in range(self._done, end):
            slot = hash(pool.puzzle(index)) & mask
            while table[slot]:
                slot = (slot + 1) & mask
            table[slot] = index + 1
        self._done = end

    def find(self, pool: Grids, grid: str) -> int | None:
        """The index of the record of ``pool`` (the pool this index is of) whose grid is ``grid`` (81 characters,
        ``.`` for empty), or None when there is none among the records indexed so far (indexing the next chunk
        first)."""
        if self._done < self._count:
            self._build(pool)
        table, mask = self._table, self._mask
        slot = hash(grid) & mask
        # The table is at most half full, so a run of filled slots ends.
        while number := table[slot]:
            if pool.puzzle(number - 1) == grid:
                return number - 1
            slot = (slot + 1) & mask
        return None
