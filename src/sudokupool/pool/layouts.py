"""Which records of a pool may hold a grid in another layout, found by the grid's layout key
(:func:`sudokupool.sudoku.layouts.layout_key`) without working out its canonical form.

The index is a table of record numbers probed linearly from the key, at least twice as many slots as records, in
u32 entries: a record's number in the low bits and, in the bits its pool's size leaves free, part of its key, so
that a probe passes records of other keys without reading their grids (8 bytes a record, this process's own, as
the grid index of ``grids.py``). It is built a chunk of records at each :meth:`LayoutIndex.candidates` (a key takes
a few microseconds, so a chunk is smaller than the grid index's), and says whether it is complete: a grid whose
candidates an incomplete index lacks may still be in the pool.

Whatever a pool holds, a lookup stays bounded: it probes at most :data:`MAX_PROBES` slots and yields at most
:data:`MAX_CANDIDATES` records, and says when it stopped short (a pool may hold many records whose keys are
alike: an export is not checked for that).
"""

from __future__ import annotations

from array import array
from typing import Final

from sudokupool.pool.grids import Grids
from sudokupool.sudoku.layouts import layout_key

#: Records indexed at each call of :meth:`LayoutIndex.candidates` until all are (a key takes 4-10 µs: a few
#: milliseconds of work).
CHUNK: Final = 512
#: The most slots one lookup probes, and the most records with the grid's key it yields.
MAX_PROBES: Final = 256
MAX_CANDIDATES: Final = 8


class LayoutIndex:
    """The records of a pool of ``count`` records by their layout key (see the module docstring); as ``GridIndex``,
    passed its pool at each call rather than keeping it."""

    def __init__(self, count: int, *, chunk: int = CHUNK) -> None:
        self._count = count
        slots = 1 << max(4, (2 * count).bit_length())
        self._mask = slots - 1
        self._table = array("I", bytes(4 * slots))
        # The entry's low bits hold the record's number + 1 (0: an empty slot), the rest bits of its key.
        self._number_bits = (count + 1).bit_length()
        self._numbers = (1 << self._number_bits) - 1
        self._done = 0
        self._chunk = chunk

    @property
    def complete(self) -> bool:
        """Whether every record is indexed."""
        return self._done == self._count

    def _tag(self, key: int) -> int:
        """The entry bits of ``key`` beside a record number (none for a pool of 2**31 records or more)."""
        return (key >> 40 << self._number_bits) & 0xFFFFFFFF

    def _build(self, pool: Grids) -> None:
        table, mask = self._table, self._mask
        end = min(self._count, self._done + self._chunk)
        for index in range(self._done, end):
            key = layout_key(pool.puzzle(index))
            slot = key & mask
            while table[slot]:
                slot = (slot + 1) & mask
            table[slot] = self._tag(key) | (index + 1)
        self._done = end

    def candidates(self, pool: Grids, key: int) -> tuple[list[int], bool]:
        """The records of ``pool`` (the pool this index is of) indexed so far whose entry matches the layout key
        ``key`` (the grids of most have that key, a few only the part of it the entry holds), in a fixed order
        (indexing the next chunk first); and whether they are all the pool has: the index complete and no bound
        reached."""
        if self._done < self._count:
            self._build(pool)
        table, mask, numbers = self._table, self._mask, self._numbers
        tag = self._tag(key)
        slot = key & mask
        found: list[int] = []
        for _ in range(MAX_PROBES):
            entry = table[slot]
            if not entry:
                return found, self.complete
            if entry & ~numbers == tag:
                if len(found) == MAX_CANDIDATES:
                    break
                found.append((entry & numbers) - 1)
            slot = (slot + 1) & mask
        return found, False
