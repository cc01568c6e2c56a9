"""A keyed shuffle of ``0 .. size - 1``: position ``i`` of a seeded order, worked out alone, with no table.

A set (``/api/v2/puzzles?count=N&seed=S&offset=K``) is positions ``K`` to ``K + N - 1`` of one fixed order of
the puzzles that match its filters. The order must be the same on every instance and worker that serves the
export, for any seed, and cost nothing per seed: no list of a million positions made and shuffled per seed
(megabytes and tens of milliseconds each). So the order is a permutation computed one position at a time: a
Feistel network over the smallest range of ``2**b`` values that holds ``size`` (each round a bijection of
``b``-bit numbers, so the whole is one), walked again from any value past ``size`` until it lands inside
("cycle walking", Black and Rogaway, "Ciphers with Arbitrary Finite Domains", 2002): still a bijection of
``0 .. size - 1``, and since ``2**b < 2 * size`` a position takes under two walks on average. The round
function is a keyed 32-bit integer mix (after MurmurHash3's finaliser), not a cipher: the order only has to
look shuffled and be fixed by its key, not to hide it. It handles sizes up to ``2**32``.
"""

from __future__ import annotations

import hashlib
from typing import Final

#: Rounds of the network: four, as Luby and Rackoff's construction needs for a pseudo-random permutation
#: (its round function random enough).
ROUNDS: Final = 4
_M32: Final = (1 << 32) - 1


class Shuffle:
    """A permutation of ``range(size)`` fixed by ``key`` (any bytes): ``shuffle[i]`` is its ``i``-th value."""

    __slots__ = ("_halves", "_keys", "size")

    def __init__(self, key: bytes, size: int) -> None:
        if size < 0:
            raise ValueError("a shuffle's size is not negative")
        self.size = size
        bits = max(2, (size - 1).bit_length())
        low = bits // 2
        #: The widths (right, left) of the halves, alternating from round to round.
        self._halves = (low, bits - low)
        digest = hashlib.blake2b(key, digest_size=4 * ROUNDS, person=b"sudokupool-set").digest()
        self._keys = tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "little") for i in range(ROUNDS))

    def __len__(self) -> int:
        return self.size

    def _once(self, value: int) -> int:
        right_bits, left_bits = self._halves
        for key in self._keys:
            right = value & ((1 << right_bits) - 1)
            left = value >> right_bits
            mixed = ((right ^ key) * 0x9E3779B1) & _M32
            mixed = ((mixed ^ (mixed >> 15)) * 0x85EBCA77) & _M32
            mixed ^= mixed >> 13
            # (left, right) -> (right, left ^ F(right)): the right half moves up, the widths swap.
            value = (right << left_bits) | ((left ^ mixed) & ((1 << left_bits) - 1))
            right_bits, left_bits = left_bits, right_bits
        return value

    def __getitem__(self, position: int) -> int:
        if not 0 <= position < self.size:
            raise IndexError("position out of range")
        value = self._once(position)
        while value >= self.size:
            value = self._once(value)
        return value
