"""A candidate grid: the pencil marks a human solver keeps while solving.

Each cell holds a bitmask of its remaining candidates (bit ``d - 1`` stands for digit ``d``); a
filled cell holds the mask 0 and its digit in ``values``. Placing a digit removes it from the
candidates of every peer, which is the one implicit elimination a solve path does not list.
"""

from __future__ import annotations

from typing import Final

from sudokupool.sudoku.grid import EMPTY, HOUSES, PEERS, GridError

ALL: Final = 0x1FF
BIT: Final[tuple[int, ...]] = tuple(0 if d == 0 else 1 << (d - 1) for d in range(10))
# Lookup tables over all 512 masks keep the inner loops free of bit counting.
POPCOUNT: Final[tuple[int, ...]] = tuple(bin(m).count("1") for m in range(512))
DIGITS_OF: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(d for d in range(1, 10) if m >> (d - 1) & 1) for m in range(512)
)
# For a single-bit mask, its digit (0 for anything else).
DIGIT_OF_BIT: Final[dict[int, int]] = {1 << (d - 1): d for d in range(1, 10)}
PEER_LISTS: Final[tuple[tuple[int, ...], ...]] = tuple(tuple(sorted(p)) for p in PEERS)


class Candidates:
    """Mutable candidate state of a grid in the middle of a solve."""

    __slots__ = ("cands", "values")

    def __init__(self, values: list[int], cands: list[int]) -> None:
        self.values = values
        self.cands = cands

    @classmethod
    def from_puzzle(cls, puzzle: str) -> Candidates:
        """Candidates of ``puzzle``: every digit not already in a cell's row, column or box.

        Raises :class:`GridError` when two givens clash.
        """
        values = [0 if ch == EMPTY else ord(ch) - 48 for ch in puzzle]
        cands = [0 if v else ALL for v in values]
        for cell, v in enumerate(values):
            if v:
                bit = BIT[v]
                for p in PEER_LISTS[cell]:
                    if values[p] == v:
                        raise GridError(f"digit {v} appears twice in a house")
                    cands[p] &= ~bit
        return cls(values, cands)

    def copy(self) -> Candidates:
        return Candidates(self.values[:], self.cands[:])

    def place(self, cell: int, digit: int) -> None:
        """Fill ``cell`` with ``digit`` and remove ``digit`` from the candidates of its peers."""
        self.values[cell] = digit
        self.cands[cell] = 0
        mask = ~BIT[digit]
        cands = self.cands
        for p in PEER_LISTS[cell]:
            cands[p] &= mask

    def eliminate(self, cell: int, digit: int) -> bool:
        """Remove one candidate; True when it was there."""
        bit = BIT[digit]
        if self.cands[cell] & bit:
            self.cands[cell] &= ~bit
            return True
        return False

    def has(self, cell: int, digit: int) -> bool:
        return bool(self.cands[cell] & BIT[digit])

    def positions(self, house: int, digit: int) -> list[int]:
        """Cells of ``house`` (0..26) that still hold ``digit`` as a candidate."""
        bit = BIT[digit]
        cands = self.cands
        return [c for c in HOUSES[house] if cands[c] & bit]

    def digit_cells(self, digit: int) -> list[int]:
        """All cells holding ``digit`` as a candidate."""
        bit = BIT[digit]
        return [c for c, m in enumerate(self.cands) if m & bit]

    def empty_cells(self) -> list[int]:
        return [c for c, v in enumerate(self.values) if v == 0]

    def is_solved(self) -> bool:
        return 0 not in self.values

    def is_broken(self) -> bool:
        """True when an empty cell has no candidate left (the puzzle or a step was wrong)."""
        values = self.values
        return any(m == 0 and values[c] == 0 for c, m in enumerate(self.cands))

    def grid(self) -> str:
        return "".join(str(v) if v else EMPTY for v in self.values)


def sees(a: int, b: int) -> bool:
    """True when cells ``a`` and ``b`` are distinct and share a row, column or box."""
    return b in PEERS[a]


def common_peers(*cells: int) -> frozenset[int]:
    """Cells that see every one of ``cells`` (never one of ``cells`` itself)."""
    result = PEERS[cells[0]]
    for c in cells[1:]:
        result = result & PEERS[c]
    return result.difference(cells)
