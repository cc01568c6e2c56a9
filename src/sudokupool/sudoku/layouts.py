"""Two grids as layouts of one puzzle, without either's canonical form: a key every layout of a puzzle shares, and
the transformations that take one given layout onto another.

:func:`layout_key` reads a grid's clue counts by row, column, band, stack and digit with string methods (a few
microseconds, where the canonical form takes most of a millisecond); any two layouts of a puzzle have the same key,
and most puzzles of a pool have a key no other has. :func:`moves_between` then finds every move of cells and
digits that takes one grid onto the other: a row or column (a line) can only go to a line with the same fingerprint (its
clue count and, for each of its clues, the clue count of the crossing line and how often the clue's digit is given;
every transformation keeps these), so the few line orders with matching fingerprints, chute by chute, are tried
whole and the digits' relabelling read off the first pair of cells. A puzzle whose lines are all told apart has one
order of rows and one of columns to try.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import compress, permutations, product
from operator import itemgetter
from typing import Final

from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.relayout import Relayout

_DIGITS: Final = "123456789"
_DIGIT_BYTES: Final = _DIGITS.encode()
_EMPTY_BYTE: Final = EMPTY.encode()
#: A digit's character to its value.
_VALUES: Final = bytes.maketrans(_DIGIT_BYTES, bytes(range(1, 10)))
_THREE: Final = tuple(permutations(range(3)))
#: Every cell's source cell under a transformation, by its row and column orders: ``_CELLS[t][r][c]`` is the cell of
#: the input grid that row ``r`` and column ``c`` of the (``t``: transposed) grid read.
_CELLS: Final = (
    tuple(tuple(r * 9 + c for c in range(9)) for r in range(9)),
    tuple(tuple(c * 9 + r for c in range(9)) for r in range(9)),
)

_ROW_COLUMN: Final = tuple(divmod(cell, 9) for cell in range(81))
#: One of each pair of a clue's crossing line count and its digit's count (0-9 each), in a line's fingerprint.
_ONE: Final = tuple(1 << 4 * pair for pair in range(100))


@lru_cache(maxsize=64)
def _line_counts(grid: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The clue counts of the rows and of the columns (the last few kept: a grid sent is keyed, then fingerprinted)."""
    rows = tuple([9 - grid.count(EMPTY, r, r + 9) for r in range(0, 81, 9)])
    columns = tuple([9 - grid[c::9].count(EMPTY) for c in range(9)])
    return rows, columns


def layout_key(grid: str) -> int:
    """A number that every layout of ``grid`` (a normalised 81-character grid) shares: the hash of its clue counts
    by band and by row within each band, by stack and by column within each stack (the two as a pair a
    transposition swaps), and by digit, each sorted. Two grids with different keys are not layouts of one puzzle.
    The same in every process (a hash of integers only)."""
    rows, columns = _line_counts(grid)
    bands = sorted([sorted(rows[0:3]), sorted(rows[3:6]), sorted(rows[6:9])])
    stacks = sorted([sorted(columns[0:3]), sorted(columns[3:6]), sorted(columns[6:9])])
    lines = (bands, stacks) if bands <= stacks else (stacks, bands)
    return hash(
        (
            *lines[0][0],
            *lines[0][1],
            *lines[0][2],
            *lines[1][0],
            *lines[1][1],
            *lines[1][2],
            *sorted(map(grid.count, _DIGITS)),
        )
    )


@lru_cache(maxsize=64)
def _fingerprints(grid: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Each row's and each column's fingerprint: the multiset, over its clues, of the clue count of the crossing line
    and the number of times the clue's digit is given, as one number (a 4-bit count for each of the 100 pairs: adding
    is counting, and two lines' multisets are equal when their numbers are). The last few are kept: a grid sent is
    compared with each record that may hold it, and a record is often asked for in several layouts."""
    rows, columns = _line_counts(grid)
    # Each cell's digit's count (0 for an empty cell): the clues are the cells whose count is not 0.
    times = grid.encode().translate(bytes.maketrans(_EMPTY_BYTE + _DIGIT_BYTES, bytes([0, *map(grid.count, _DIGITS)])))
    by_row = [0] * 9
    by_column = [0] * 9
    for cell in compress(range(81), times):
        r, c = _ROW_COLUMN[cell]
        count = times[cell]
        by_row[r] += _ONE[columns[c] * 10 + count]
        by_column[c] += _ONE[rows[r] * 10 + count]
    return tuple(by_row), tuple(by_column)


def _orders(target: tuple[int, ...], source: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every order of ``source`` 's lines (``order[i]``: the source line that becomes line ``i``) that keeps chutes
    together and gives each line of ``target`` a source line of its fingerprint."""
    if sorted(target) != sorted(source):
        return []
    line_of = dict(zip(source, range(9), strict=True))
    if len(line_of) == 9:
        # Every line told apart (most puzzles): the one order that gives each line its fingerprint, if it keeps chutes
        # together.
        order = tuple(map(line_of.__getitem__, target))
        a, b, c, d, e, f, g, h, i = (line // 3 for line in order)
        return [order] if a == b == c and d == e == f and g == h == i else []
    wanted = (target[0:3], target[3:6], target[6:9])
    chutes = (source[0:3], source[3:6], source[6:9])
    alike = [sorted(chute) for chute in chutes]
    # For each target chute and source chute, the orders of the source chute's lines that fit the target chute's.
    fits: list[list[list[tuple[int, ...]]]] = []
    for lines in wanted:
        shape = sorted(lines)
        fits.append(
            [
                [(s + a, s + b, s + c) for a, b, c in _THREE if (chute[a], chute[b], chute[c]) == lines]
                if alike[s // 3] == shape
                else []
                for s, chute in zip((0, 3, 6), chutes, strict=True)
            ]
        )
    orders: list[tuple[int, ...]] = []
    for first, second, third in _THREE:
        options = (fits[0][first], fits[1][second], fits[2][third])
        if all(options):
            orders.extend(a + b + c for a, b, c in product(*options))
    return orders


def moves_between(source: str, target: str, most: int) -> list[Relayout] | None:
    """Every move of cells and digits that takes the grid ``source`` onto the grid ``target`` (normalised
    81-character grids): none when they are not layouts of one puzzle, more than one when the puzzle has symmetries.
    None when more than ``most`` pairs of row and column orders would have to be tried (a grid with few clues, whose
    lines are alike)."""
    target_rows, target_columns = _fingerprints(target)
    source_rows, source_columns = _fingerprints(source)
    found: list[Relayout] = []
    tried = 0
    source_bytes, target_bytes = source.encode(), target.encode()
    for transpose in (False, True):
        rows_of, columns_of = (source_columns, source_rows) if transpose else (source_rows, source_columns)
        row_orders = _orders(target_rows, rows_of)
        column_orders = _orders(target_columns, columns_of) if row_orders else []
        tried += len(row_orders) * len(column_orders)
        if tried > most:
            return None
        cells = _CELLS[transpose]
        for rows, columns in product(row_orders, column_orders):
            # reads[i]: the cell of ``source`` that lands in cell i.
            reads = [cells[r][c] for r in rows for c in columns]
            digits = _relabelling(bytes(itemgetter(*reads)(source_bytes)), target_bytes)
            if digits is not None:
                found.append(Relayout(tuple(sorted(range(81), key=reads.__getitem__)), digits, transpose))
    return found


def _relabelling(moved: bytes, target: bytes) -> tuple[int, ...] | None:
    """The relabelling of digits (``digits[d - 1]``: what ``d`` becomes) that turns ``moved`` into ``target`` (grids
    as ASCII), or None when none does (their clues differ in place, or a digit would become two). Digits neither
    holds go to the digits left over, in increasing order."""
    given, wanted = moved.replace(_EMPTY_BYTE, b""), target.replace(_EMPTY_BYTE, b"")
    if len(given) != len(wanted):
        return None
    # Each digit of ``moved`` to the last digit it faces in ``target`` (bytes translate by a table, a lookup a
    # character): the two read alike through that only when their clues are in the same cells and each digit always
    # faces one digit, and no two digits face one when each grid gives as many.
    table = bytes.maketrans(given, wanted)
    kinds = len(set(given))
    if moved.translate(table) != target or len(set(wanted)) != kinds:
        return None
    labels = _DIGIT_BYTES.translate(table)  # a digit ``moved`` does not give stays itself
    if kinds < 9:
        spare = iter(sorted(set(_DIGIT_BYTES).difference(wanted)))
        labels = bytes(
            [label if digit in given else next(spare) for digit, label in zip(_DIGIT_BYTES, labels, strict=True)]
        )
    return tuple(labels.translate(_VALUES))
