"""The minlex canonical form of a puzzle (docs/export-format.md, "Canonical form and share codes").

Over all 3,359,232 layout transformations (transposition, band and stack order, row order within each
band, column order within each stack), relabel the digits 1, 2, 3... in order of first appearance and
take the lexicographically smallest 81-character string, where ``.`` sorts before every digit.

The form is built one row at a time, carrying on only the partial layouts that tie for the smallest
prefix (a breadth-first branch and bound). A partial layout does not fix a whole column order: it keeps
the columns (and stacks) that no chosen row has told apart as groups still free to be ordered, so one
partial layout stands for every column order that agrees with the rows so far. Choosing a row:

* Within a group of interchangeable columns the smallest reading puts the empty cells first, then the
  digits already labelled (smallest label first), then new digits, which take the next free labels in
  the order they are read; a group of interchangeable stacks is read in the order of their smallest
  readings. Reading new digits as one value above every label compares readings exactly as the
  relabelled strings compare, because two readings that agree so far have used the same labels.
* Only where the smallest reading leaves a choice that matters (new digits in interchangeable columns
  or stacks, whose order decides their labels) does a partial layout split; empty cells keep their
  columns interchangeable.

Every partial layout kept is a prefix of some full transformation and every one dropped is beaten on a
prefix, so the result is exactly the minimum over the whole group. :func:`canonical_transform` also gives
one transformation that maps the puzzle onto its form.
"""

from __future__ import annotations

from itertools import permutations, product
from operator import itemgetter
from typing import NamedTuple

from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.transform import Transform

_CHARS = ".123456789"
# How a digit without a label yet reads while comparing: after every label.
_NEW = 10

# Columns still interchangeable; a stack is its column groups in order; a stack group holds more than one
# stack only while those stacks are still interchangeable (empty on every row so far).
_Columns = tuple[int, ...]
_Stack = tuple[_Columns, ...]
_Structure = tuple[tuple[_Stack, ...], ...]
_START: _Structure = ((((0, 1, 2),), ((3, 4, 5),), ((6, 7, 8),)),)


class _Layout(NamedTuple):
    """A partial layout: the rows chosen so far (in order) and what is left free of the columns."""

    transpose: int
    mask: int  # the source rows chosen so far, as bits
    rows: tuple[int, ...]
    structure: _Structure
    labels: tuple[int, ...]  # digit -> label, 0 for none yet; index 0 unused
    free: int  # the next free label
    order: tuple[int, ...] | None  # the column order once every column is placed


def _rows_of(puzzle: str, transpose: bool) -> list[tuple[int, ...]]:
    values = [0 if ch == EMPTY else ord(ch) - 48 for ch in puzzle]
    if transpose:
        return [tuple(values[c * 9 + r] for c in range(9)) for r in range(9)]
    return [tuple(values[r * 9 + c] for c in range(9)) for r in range(9)]


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


def _stack_reading(row: tuple[int, ...], stack: _Stack, rank: tuple[int, ...]) -> list[int]:
    out: list[int] = []
    for columns in stack:
        if len(columns) == 1:
            out.append(rank[row[columns[0]]])
        else:
            out.extend(sorted([rank[row[c]] for c in columns]))
    return out


def _reading(row: tuple[int, ...], layout: _Layout, rank: tuple[int, ...]) -> tuple[int, ...]:
    """The smallest relabelled reading of ``row`` that ``layout`` allows."""
    if layout.order is not None:
        out = [rank[row[c]] for c in layout.order]
    else:
        out = []
        for group in layout.structure:
            if len(group) == 1:
                out.extend(_stack_reading(row, group[0], rank))
            else:
                for reading in sorted([_stack_reading(row, stack, rank) for stack in group]):
                    out.extend(reading)
    if _NEW in out:
        label = layout.free
        for i, value in enumerate(out):
            if value == _NEW:
                out[i] = label
                label += 1
    return tuple(out)


# One way to read a stack smallest: its refined column groups and its new digits in reading order.
_StackChoice = tuple[_Stack, tuple[int, ...]]


def _stack_choices(row: tuple[int, ...], stack: _Stack, rank: tuple[int, ...]) -> list[_StackChoice]:
    choices: list[_StackChoice] = [((), ())]
    for columns in stack:
        empties = tuple(c for c in columns if not row[c])
        known = sorted((rank[row[c]], c) for c in columns if row[c] and rank[row[c]] != _NEW)
        new = [c for c in columns if rank[row[c]] == _NEW]
        fixed: _Stack = ((empties,) if empties else ()) + tuple((c,) for _, c in known)
        orders = list(permutations(new)) if len(new) > 1 else [tuple(new)]
        choices = [
            (done + fixed + tuple((c,) for c in order), digits + tuple(row[c] for c in order))
            for done, digits in choices
            for order in orders
        ]
    return choices


# One way to read a stack group smallest: its new stack groups and its new digits in reading order.
_GroupChoice = tuple[tuple[tuple[_Stack, ...], ...], tuple[int, ...]]


def _group_choices(row: tuple[int, ...], group: tuple[_Stack, ...], rank: tuple[int, ...]) -> list[_GroupChoice]:
    if len(group) == 1:
        return [(((stack,),), digits) for stack, digits in _stack_choices(row, group[0], rank)]
    keyed = sorted((_stack_reading(row, stack, rank), stack) for stack in group)
    # Runs of stacks whose smallest readings are equal: all-empty ones stay interchangeable, others
    # (with new digits) are tried in every order, as the order decides their labels.
    parts: list[list[_GroupChoice]] = []
    start = 0
    while start < len(keyed):
        end = start + 1
        while end < len(keyed) and keyed[end][0] == keyed[start][0]:
            end += 1
        run = [stack for _, stack in keyed[start:end]]
        if not any(keyed[start][0]):
            parts.append([(((*run,),), ())])
        else:
            options: list[_GroupChoice] = []
            for order in permutations(run) if len(run) > 1 else [tuple(run)]:
                for picks in product(*(_stack_choices(row, stack, rank) for stack in order)):
                    options.append((tuple((stack,) for stack, _ in picks), sum((d for _, d in picks), ())))
            parts.append(options)
        start = end
    return [
        (sum((groups for groups, _ in picks), ()), sum((digits for _, digits in picks), ()))
        for picks in product(*parts)
    ]


def _flat_order(structure: _Structure) -> tuple[int, ...] | None:
    if all(len(group) == 1 and all(len(columns) == 1 for columns in group[0]) for group in structure):
        return tuple(columns[0] for group in structure for columns in group[0])
    return None


def _extend(layout: _Layout, r: int, row: tuple[int, ...], rank: tuple[int, ...]) -> list[_Layout]:
    """Every partial layout that reads ``row`` (source row ``r``) smallest next after ``layout``."""
    mask = layout.mask | 1 << r
    rows = (*layout.rows, r)
    if layout.order is not None:
        labels = list(layout.labels)
        free = layout.free
        for c in layout.order:
            v = row[c]
            if v and not labels[v]:
                labels[v] = free
                free += 1
        return [layout._replace(mask=mask, rows=rows, labels=tuple(labels), free=free)]
    out = []
    for picks in product(*(_group_choices(row, group, rank) for group in layout.structure)):
        structure = sum((groups for groups, _ in picks), ())
        labels = list(layout.labels)
        free = layout.free
        for _, digits in picks:
            for v in digits:
                labels[v] = free
                free += 1
        out.append(_Layout(layout.transpose, mask, rows, structure, tuple(labels), free, _flat_order(structure)))
    return out


def _first_rows(
    grids: tuple[list[tuple[int, ...]], list[tuple[int, ...]]], starts: list[_Layout]
) -> tuple[tuple[int, ...], list[tuple[_Layout, int, tuple[int, ...]]]]:
    """The smallest first row and the (start, row) pairs that read it. Every digit of a first row is new, so its
    smallest reading puts each stack's empty cells first and the stacks in order of their clue counts: the rows
    that read smallest are those whose sorted clue counts are smallest, and no row needs reading in full."""
    keyed = []
    for layout in starts:
        for r, row in enumerate(grids[layout.transpose]):
            counts = tuple(sorted((row[s] > 0) + (row[s + 1] > 0) + (row[s + 2] > 0) for s in (0, 3, 6)))
            keyed.append((counts, layout, r))
    least = min(counts for counts, _, _ in keyed)
    reading: list[int] = []
    for count in least:
        reading += [0] * (3 - count) + [_NEW] * count
    label = 1
    for i, value in enumerate(reading):
        if value == _NEW:
            reading[i] = label
            label += 1
    rank = (0,) + (_NEW,) * 9
    return tuple(reading), [(layout, r, rank) for counts, layout, r in keyed if counts == least]


def _minimise(puzzle: str, most: int | None = None) -> tuple[str, _Layout] | None:
    grids = (_rows_of(puzzle, False), _rows_of(puzzle, True))
    layouts = [_Layout(t, 0, (), _START, (0,) * 10, 1, None) for t in (0, 1)]
    result: list[str] = []
    for level in range(9):
        best: tuple[int, ...] | None = None
        ties: list[tuple[_Layout, int, tuple[int, ...]]] = []
        if level == 0:
            best, ties = _first_rows(grids, layouts)
        for layout in layouts if level else ():
            rows = grids[layout.transpose]
            rank = (0, *(label or _NEW for label in layout.labels[1:]))
            for r in _NEXT_ROWS[layout.mask]:
                reading = _reading(rows[r], layout, rank)
                if best is None or reading < best:
                    best, ties = reading, [(layout, r, rank)]
                elif reading == best:
                    ties.append((layout, r, rank))
        assert best is not None
        result.append("".join(_CHARS[v] for v in best))
        # Layouts that reach the same rows (as a set), columns left free and labels have the same futures,
        # whatever order the rows came in, so they are merged; this keeps sparse grids tractable.
        survivors: dict[tuple[int, int, _Structure, tuple[int, ...]], _Layout] = {}
        if most is not None and len(ties) > most:
            return None
        for layout, r, rank in ties:
            for new in _extend(layout, r, grids[layout.transpose][r], rank):
                survivors.setdefault((new.transpose, new.mask, new.structure, new.labels), new)
            # Checked as the layouts grow, not once the row is done: a full grid's first row alone would make
            # tens of thousands.
            if most is not None and len(survivors) > most:
                return None
        layouts = list(survivors.values())
    return "".join(result), layouts[0]


def canonical_form(puzzle: str) -> str:
    """The minlex canonical form of ``puzzle`` (a normalised 81-character grid, see module docstring)."""
    found = _minimise(puzzle)
    assert found is not None
    return found[0]


def canonical_transform(puzzle: str) -> tuple[str, Transform]:
    """The canonical form of ``puzzle`` and one transformation that maps ``puzzle`` onto it.

    Where the puzzle has symmetries several transformations do; any of them maps its solution onto the
    form's solution. Digits the puzzle lacks take the labels left over, in increasing order.
    """
    found = canonical_transform_within(puzzle, None)
    assert found is not None
    return found


def canonical_transform_within(puzzle: str, most: int | None) -> tuple[str, Transform] | None:
    """:func:`canonical_transform`, or None when more than ``most`` partial layouts tie after some row.

    The work is about proportional to the layouts that tie, which stay in the tens for puzzles with a
    unique solution and reach tens of thousands for a full grid (every relabelling ties), so a caller that
    must answer quickly bounds it and hands the rest to computed work.
    """
    found = _minimise(puzzle, most)
    if found is None:
        return None
    form, layout = found
    columns = tuple(c for group in layout.structure for stack in group for cols in stack for c in cols)
    labels = list(layout.labels)
    spare = iter(sorted(set(range(1, 10)) - set(labels)))
    for d in range(1, 10):
        if not labels[d]:
            labels[d] = next(spare)
    return form, Transform(bool(layout.transpose), layout.rows, columns, tuple(labels[1:]))


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
