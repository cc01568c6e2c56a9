"""A small, fast bitmask solver: count solutions (for uniqueness), solve, and make random full grids.

Each cell's candidates are the digits missing from its row, column and box masks. The search always
branches on the cell with the fewest candidates, which also places naked singles first; a cell with no
candidate ends the branch. That is enough for a median of well under a millisecond per typical puzzle in
pure Python (see ``bench/``), so the builder can check uniqueness after every clue it removes.
"""

from __future__ import annotations

import random
import time

from sudokupool.sudoku.grid import BOX_OF, COL_OF, EMPTY, HOUSES, PEERS, ROW_OF

_POPCOUNT: tuple[int, ...] = tuple(bin(m).count("1") for m in range(512))
_DIGIT_OF_BIT: dict[int, str] = {1 << d: str(d + 1) for d in range(9)}
_ALL = 0x1FF


class TimeLimitExceeded(Exception):
    """A search passed its deadline."""


class _Search:
    """Mutable search state: row/column/box masks and the cells still empty."""

    __slots__ = ("boxes", "cols", "first", "found", "limit", "rng", "rows", "values")

    def __init__(self, limit: int, rng: random.Random | None) -> None:
        self.rows = [0] * 9
        self.cols = [0] * 9
        self.boxes = [0] * 9
        self.values = [0] * 81
        self.limit = limit
        self.rng = rng
        self.first: list[int] | None = None
        self.found = 0

    def place(self, grid: str) -> list[int] | None:
        """Load the givens; return the empty cells, or None when two givens clash."""
        empties: list[int] = []
        rows, cols, boxes, values = self.rows, self.cols, self.boxes, self.values
        for cell, ch in enumerate(grid):
            if ch == EMPTY:
                empties.append(cell)
                continue
            bit = 1 << (ord(ch) - 49)
            r, c, b = ROW_OF[cell], COL_OF[cell], BOX_OF[cell]
            if (rows[r] | cols[c] | boxes[b]) & bit:
                return None
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
            values[cell] = bit
        return empties

    def count(self, empties: list[int]) -> None:
        """Add the solutions below this node to ``found``, stopping once ``limit`` are found."""
        if not empties:
            if self.first is None:
                self.first = list(self.values)
            self.found += 1
            return
        rows, cols, boxes = self.rows, self.cols, self.boxes
        best_index = 0
        best_mask = 0
        best_n = 10
        for index, cell in enumerate(empties):
            mask = _ALL & ~(rows[ROW_OF[cell]] | cols[COL_OF[cell]] | boxes[BOX_OF[cell]])
            n = _POPCOUNT[mask]
            if n < best_n:
                best_n, best_index, best_mask = n, index, mask
                if n <= 1:
                    break
        if best_n == 0:
            return
        cell = empties[best_index]
        rest = empties[:best_index] + empties[best_index + 1 :]
        r, c, b = ROW_OF[cell], COL_OF[cell], BOX_OF[cell]
        bits = [1 << d for d in range(9) if best_mask >> d & 1]
        if self.rng is not None:
            self.rng.shuffle(bits)
        for bit in bits:
            rows[r] |= bit
            cols[c] |= bit
            boxes[b] |= bit
            self.values[cell] = bit
            self.count(rest)
            rows[r] ^= bit
            cols[c] ^= bit
            boxes[b] ^= bit
            if self.found >= self.limit:
                break
        self.values[cell] = 0

    def first_solution(self) -> str | None:
        if self.first is None:
            return None
        return "".join(_DIGIT_OF_BIT[bit] for bit in self.first)


def count_solutions(grid: str, limit: int = 2) -> int:
    """Number of solutions of ``grid`` (a normalised 81-character grid), counting at most ``limit``.

    ``count_solutions(p) == 1`` is the generator's uniqueness test, on grids that are givens of a full grid. A
    grid whose givens clash has 0 solutions. Branching on cells alone, it can take minutes on some grids from
    elsewhere: :func:`solutions` is the check for those.
    """
    search = _Search(limit, None)
    empties = search.place(grid)
    if empties is None:
        return 0
    search.count(empties)
    return search.found


def solutions(grid: str, limit: int = 2, *, deadline: float | None = None) -> tuple[int, str | None]:
    """How many solutions ``grid`` has (counting at most ``limit``) and the first one found; raise
    :class:`TimeLimitExceeded` when ``time.monotonic()`` passes ``deadline`` first.

    Fills naked and hidden singles before every branch, and branches on a cell or on the places of a digit
    in a house, whichever offers fewer (:class:`_Singles`): more work a node than :func:`count_solutions`,
    far fewer nodes, and no grid known to take it more than milliseconds. This is the check for a grid from
    outside (the grader's, ``check``'s)."""
    search = _Singles(limit, deadline)
    cands = search.load(grid)
    if cands is None:
        return 0, None
    search.count(cands)
    first = search.first
    return search.found, None if first is None else "".join(_DIGIT_OF_BIT[bit] for bit in first)


_HOUSE_CELLS = HOUSES
_PEERS: tuple[tuple[int, ...], ...] = tuple(tuple(sorted(PEERS[c])) for c in range(81))


class _Singles:
    """Counting search that places every naked and hidden single before it branches. A state is the
    list of each cell's candidate mask, 0 for a filled cell; ``values`` holds the filled cells' bits."""

    __slots__ = ("deadline", "first", "found", "limit", "nodes")

    def __init__(self, limit: int, deadline: float | None = None) -> None:
        self.limit = limit
        self.deadline = deadline
        self.first: list[int] | None = None
        self.found = 0
        self.nodes = 0

    @staticmethod
    def load(grid: str) -> tuple[list[int], list[int]] | None:
        cands = [_ALL] * 81
        values = [0] * 81
        for cell, ch in enumerate(grid):
            if ch != EMPTY and not _Singles.assign(cands, values, cell, 1 << (ord(ch) - 49)):
                return None
        return cands, values

    @staticmethod
    def assign(cands: list[int], values: list[int], cell: int, bit: int) -> bool:
        if not cands[cell] & bit:
            return False
        cands[cell] = 0
        values[cell] = bit
        for p in _PEERS[cell]:
            if cands[p] & bit:
                cands[p] &= ~bit
                if not cands[p]:
                    return False
        return True

    @staticmethod
    def settle(cands: list[int], values: list[int]) -> bool:
        """Place naked and hidden singles until none is left; False on a contradiction."""
        assign = _Singles.assign
        changed = True
        while changed:
            changed = False
            for cell in range(81):
                mask = cands[cell]
                if mask and not mask & (mask - 1):
                    if not assign(cands, values, cell, mask):
                        return False
                    changed = True
            for house in _HOUSE_CELLS:
                once = twice = placed = 0
                for c in house:
                    m = cands[c]
                    twice |= once & m
                    once |= m
                    placed |= values[c]
                if (once | placed) != _ALL:
                    return False
                single = once & ~twice
                while single:
                    bit = single & -single
                    single ^= bit
                    cell = next((c for c in house if cands[c] & bit), -1)
                    if cell < 0 or not assign(cands, values, cell, bit):
                        return False
                    changed = True
        return True

    def count(self, state: tuple[list[int], list[int]]) -> None:
        cands, values = state
        if not self.settle(cands, values):
            return
        best, best_n = -1, 10
        for cell in range(81):
            mask = cands[cell]
            if mask:
                n = _POPCOUNT[mask]
                if n < best_n:
                    best, best_n = cell, n
                    if n == 2:
                        break
        if best < 0:
            if self.first is None:
                self.first = values
            self.found += 1
            return
        branches: list[tuple[int, int]] = []
        mask = cands[best]
        while mask:
            bit = mask & -mask
            mask ^= bit
            branches.append((best, bit))
        if best_n > 2:
            # A digit with fewer places in a house than the best cell has candidates is the smaller choice.
            # Branching on cells alone, a grid with several solutions can sink minutes into subtrees without
            # any (Norvig's "hard1": 88 s); choosing among both, as an exact-cover search does, takes
            # milliseconds.
            branches = _fewest_places(cands, branches)
        for cell, bit in branches:
            if self.found >= self.limit:
                break
            self.nodes += 1
            if self.deadline is not None and not self.nodes & 1023 and time.monotonic() > self.deadline:
                raise TimeLimitExceeded
            trial, filled = list(cands), list(values)
            if self.assign(trial, filled, cell, bit):
                self.count((trial, filled))


def _fewest_places(cands: list[int], fewest: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The places of the digit that has the fewest places in one house (at least one), when fewer than
    ``fewest``; else ``fewest``."""
    for house in _HOUSE_CELLS:
        for d in range(9):
            bit = 1 << d
            places = [(c, bit) for c in house if cands[c] & bit]
            if places and len(places) < len(fewest):
                fewest = places
                if len(fewest) == 2:
                    return fewest
    return fewest


def solved_by_singles(grid: str) -> bool:
    """True when naked and hidden singles alone fill ``grid`` (a cheap test, a few hundred microseconds: the
    grader would then find the puzzle Easy, its hardest step a single)."""
    state = _Singles.load(grid)
    return state is not None and _Singles.settle(*state) and not any(state[0])


# Digit d's candidates as one 81-bit mask; a house's cells and the cells a given rules d out of (its peers and
# itself), as masks.
_HOUSE_MASKS: tuple[int, ...] = tuple(sum(1 << c for c in house) for house in HOUSES)
_SEEN_MASKS: tuple[int, ...] = tuple(sum(1 << p for p in PEERS[c]) | 1 << c for c in range(81))


def fills_by_singles(grid: str) -> bool:
    """:func:`solved_by_singles` for a grid known to have a solution (the generator's: givens of a full grid),
    in about 0.6 of its time; a grid with no solution may be reported filled.

    Each digit's candidates are one integer (a bit per cell), so a round finds the naked singles of every
    cell at once (the cells in exactly one digit's mask); hidden singles are looked for only in a round
    without naked singles. The singles placed do not depend on the order they are found in."""
    cand = [(1 << 81) - 1] * 9
    empty = 0
    seen = _SEEN_MASKS
    for cell, ch in enumerate(grid):
        if ch == EMPTY:
            empty |= 1 << cell
        else:
            cand[ord(ch) - 49] &= ~seen[cell]
    cand = [mask & empty for mask in cand]
    while empty:
        once = twice = 0
        for mask in cand:
            twice |= once & mask
            once |= mask
        if empty & ~once:
            return False  # a cell without a candidate
        naked = once & ~twice
        placed = 0
        for digit in range(9):
            mask = cand[digit]
            found = mask & naked
            if not naked:
                for house in _HOUSE_MASKS:
                    here = mask & house
                    if here and not here & (here - 1):
                        found |= here
                found &= ~placed
            if found:
                placed |= found
                while found:
                    low = found & -found
                    mask &= ~seen[low.bit_length() - 1]
                    found ^= low
                cand[digit] = mask
        if not placed:
            return False
        empty &= ~placed
        cand = [mask & ~placed for mask in cand]
    return True


def solve(grid: str) -> str | None:
    """The solution of ``grid`` (the first one found if there are several), or None if it has none."""
    search = _Search(1, None)
    empties = search.place(grid)
    if empties is None:
        return None
    search.count(empties)
    return search.first_solution()


def random_full_grid(rng: random.Random) -> str:
    """A uniformly shuffled search for a complete, valid grid; deterministic for the state of ``rng``.

    The three diagonal boxes do not constrain one another, so they are filled with random
    permutations first; the search then completes the grid trying candidates in random order.
    """
    while True:
        cells = ["."] * 81
        for box in (0, 4, 8):
            digits = list("123456789")
            rng.shuffle(digits)
            top, left = (box // 3) * 3, (box % 3) * 3
            for k, digit in enumerate(digits):
                cells[(top + k // 3) * 9 + left + k % 3] = digit
        search = _Search(1, rng)
        empties = search.place("".join(cells))
        if empties is not None:
            search.count(empties)
            solution = search.first_solution()
            if solution is not None:
                return solution
