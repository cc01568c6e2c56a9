"""The minlex canonical form of a puzzle (docs/export-format.md, "Canonical form and share codes").

Over all 3,359,232 layout transformations (transposition, band and stack order, row order within each
band, column order within each stack), relabel the digits 1, 2, 3... in order of first appearance and
take the lexicographically smallest 81-character string, where ``.`` sorts before every digit.

Trying every transformation is far too slow in Python, so the form is built one row at a time and only
the partial layouts that tie for the smallest prefix are carried on (a breadth-first branch and bound):

* Row 1 is forced to use labels 1..k in order, so it depends only on its clue pattern: the best
  first row puts each stack's empty cells first and the stacks in order of increasing clue count.
  Only the (transposition, row, column order) triples reaching that pattern survive.
* Each later row is chosen among the rows the band structure still allows (the rest of the current
  band, or any row of an unused band), rendered under each surviving column order and labelling, and
  again only the ties for the smallest row survive.

Because every surviving partial layout is a prefix of some full transformation and every discarded one
is beaten on a prefix, the result is exactly the minimum over the whole group.
"""

from __future__ import annotations

from itertools import permutations, product
from operator import itemgetter

from sudokupool.sudoku.grid import EMPTY

_CHARS = ".123456789"
_STACK_ORDERS: tuple[tuple[int, ...], ...] = tuple(permutations(range(3)))
# (transpose, bit mask of the source rows chosen so far, column order, digit -> label table, next free label)
_State = tuple[int, int, tuple[int, ...], tuple[int, ...], int]


def _rows_of(puzzle: str, transpose: bool) -> list[tuple[int, ...]]:
    values = [0 if ch == EMPTY else ord(ch) - 48 for ch in puzzle]
    if transpose:
        return [tuple(values[c * 9 + r] for c in range(9)) for r in range(9)]
    return [tuple(values[r * 9 + c] for c in range(9)) for r in range(9)]


def _first_row_orders(row: tuple[int, ...]) -> tuple[str, list[tuple[int, ...]]]:
    """The smallest first row that ``row`` can become, and every column order that gives it."""
    counts = [sum(1 for c in range(s * 3, s * 3 + 3) if row[c]) for s in range(3)]
    stack_orders = [o for o in _STACK_ORDERS if counts[o[0]] <= counts[o[1]] <= counts[o[2]]]
    within: list[list[tuple[int, ...]]] = []
    for s in range(3):
        cols = (s * 3, s * 3 + 1, s * 3 + 2)
        # Empty cells first: a column order is allowed when its cells read as empties then clues.
        within.append([p for p in permutations(cols) if all(row[p[i]] == 0 or row[p[i + 1]] != 0 for i in range(2))])
    orders: list[tuple[int, ...]] = []
    for so in stack_orders:
        for a, b, c in product(within[so[0]], within[so[1]], within[so[2]]):
            orders.append(a + b + c)
    pattern = []
    label = 0
    for col in orders[0]:
        if row[col]:
            label += 1
            pattern.append(_CHARS[label])
        else:
            pattern.append(EMPTY)
    return "".join(pattern), orders


def _render(
    row: tuple[int, ...], order: tuple[int, ...], labels: tuple[int, ...], free: int
) -> tuple[str, tuple[int, ...], int]:
    """``row`` read in column ``order`` and relabelled, giving new digits the next free labels."""
    out = []
    table: list[int] | None = None
    for col in order:
        v = row[col]
        if v == 0:
            out.append(EMPTY)
            continue
        label = labels[v] if table is None else table[v]
        if label == 0:
            if table is None:
                table = list(labels)
            label = table[v] = free
            free += 1
        out.append(_CHARS[label])
    return "".join(out), labels if table is None else tuple(table), free


def _next_rows_table() -> tuple[tuple[int, ...], ...]:
    """For every mask of chosen rows: the rows allowed next (finish the started band, else any fresh band)."""
    table = []
    for mask in range(512):
        bands = [(mask >> (b * 3)) & 7 for b in range(3)]
        started = [b for b in range(3) if bands[b] not in (0, 7)]
        if started:
            allowed = [r for r in range(started[0] * 3, started[0] * 3 + 3) if not mask >> r & 1]
        else:
            allowed = [r for r in range(9) if bands[r // 3] == 0]
        table.append(tuple(allowed))
    return tuple(table)


_NEXT_ROWS = _next_rows_table()


def canonical_form(puzzle: str) -> str:
    """The minlex canonical form of ``puzzle`` (a normalised 81-character grid, see module docstring)."""
    grids = (_rows_of(puzzle, False), _rows_of(puzzle, True))
    best = ""
    starts: list[tuple[int, int, list[tuple[int, ...]]]] = []
    for t, rows in enumerate(grids):
        for r, row in enumerate(rows):
            text, orders = _first_row_orders(row)
            if not starts or text < best:
                best, starts = text, [(t, r, orders)]
            elif text == best:
                starts.append((t, r, orders))
    states: list[_State] = []
    for t, r, orders in starts:
        row = grids[t][r]
        for order in orders:
            _, labels, free = _render(row, order, (0,) * 10, 1)
            states.append((t, 1 << r, order, labels, free))
    result = [best]
    for _ in range(8):
        best = ""
        # Ties that reach the same rows (as a set), column order and labelling have the same futures,
        # whatever order the rows came in, so they are merged; this keeps sparse grids tractable.
        survivors: dict[tuple[int, int, tuple[int, ...], tuple[int, ...]], _State] = {}
        for t, mask, order, labels, free in states:
            rows = grids[t]
            for r in _NEXT_ROWS[mask]:
                text, new_labels, new_free = _render(rows[r], order, labels, free)
                if text > best and survivors:
                    continue
                if text < best or not survivors:
                    best = text
                    survivors = {}
                new_mask = mask | 1 << r
                survivors[(t, new_mask, order, new_labels)] = (t, new_mask, order, new_labels, new_free)
        result.append(best)
        states = list(survivors.values())
    return "".join(result)


#: The cells box by box (box 1's nine, then box 2's...), so that a box is a slice of a grid read in this order.
_BOX_ORDER = itemgetter(*(27 * (b // 3) + 3 * (b % 3) + 9 * (i // 3) + i % 3 for b in range(9) for i in range(9)))


def invariants(puzzle: str) -> tuple[object, ...]:
    """What every form of ``puzzle`` shares, cheap to work out (microseconds, where the canonical form takes
    milliseconds): the clue count; how many times each digit is given, sorted (relabelling permutes the
    digits); the clue counts of the boxes, sorted; and those of the rows and of the columns, sorted, as a pair
    that a transposition swaps. Two puzzles whose invariants differ have different canonical forms."""
    boxes = "".join(_BOX_ORDER(puzzle))
    rows = tuple(sorted(9 - puzzle.count(EMPTY, r, r + 9) for r in range(0, 81, 9)))
    cols = tuple(sorted(9 - puzzle[c::9].count(EMPTY) for c in range(9)))
    return (
        81 - puzzle.count(EMPTY),
        tuple(sorted(map(puzzle.count, "123456789"))),
        tuple(sorted(9 - boxes.count(EMPTY, b, b + 9) for b in range(0, 81, 9))),
        (rows, cols) if rows <= cols else (cols, rows),
    )
