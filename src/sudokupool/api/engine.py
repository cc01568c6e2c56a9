"""The engine over HTTP: ``GET /grids/{grid}``, ``/grids/{grid}/hint`` and ``/puzzles/{id}/hint``.

A grid the pool holds in any equivalent layout is a lookup, answered in the loop without queueing. In the
layout the pool holds it, the pool's grid index (``sudokupool.pool.grids``) finds the record, served from its
prepared body; in any other, its layout key (``sudokupool.pool.layouts``) finds the records that may hold it
and a directed match (``sudokupool.sudoku.layouts``) the one move of the record onto it, or, where that does not
settle it (the index not complete yet, a bound reached, a puzzle with symmetries), its canonical form (bounded:
:data:`LOOKUP_LAYOUTS`) does; the record is moved to the layout asked from its body, reading as JSON only the steps
of its solve path that are not singles. Any other grid is graded live, and every hint is found, as a job of the work
pool (its queue bound, budget and dropping of jobs whose client left), and costs the client more of its ``/api/v2``
limit than a lookup (``SUDOKUPOOL_COST_GRADE``, ``SUDOKUPOOL_COST_HINT``). Answers and errors alike go into one
byte-bounded cache keyed by what was asked, so one grid asked by many is computed once; the same question always
gives the same bytes, with an ETag and a long public ``Cache-Control``.

In the cache an answer is its status as three ASCII digits followed by its body.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import lru_cache, partial
from typing import Final, TypeVar
from weakref import WeakKeyDictionary

import orjson
from isal.isal_zlib import crc32
from starlette.types import Scope

from sudokupool.api.compression import DAMAGED
from sudokupool.api.computed import charge, left_of, work_error
from sudokupool.api.conditional import not_modified
from sudokupool.api.endpoints import JSON, Endpoints, Reply
from sudokupool.api.errors import ApiError, BadRequest
from sudokupool.api.query import Header, queries
from sudokupool.pool.grids import GridIndex
from sudokupool.pool.layouts import LayoutIndex
from sudokupool.pool.pool import DamagedRecord, Pool
from sudokupool.sudoku import single_steps
from sudokupool.sudoku.answers import (
    Answer,
    PreparedRecord,
    grade_answer,
    grid_error,
    held_record,
    hint_answer,
    moved_body,
    moved_prepared,
    moved_record,
    prepare_record,
)
from sudokupool.sudoku.canonical import canonical_transform, canonical_transform_within
from sudokupool.sudoku.check import conflicting_cells
from sudokupool.sudoku.grid import GridError, clue_count, first_conflict, parse_grid
from sudokupool.sudoku.ids import canonical_id
from sudokupool.sudoku.layouts import layout_key, moves_between
from sudokupool.sudoku.relayout import Relayout, between
from sudokupool.sudoku.transform import Transform
from sudokupool.work import WorkBudgetExceeded, WorkDropped, WorkQueueFull

#: The most partial layouts the loop's canonical search carries after a row before it stops looking the grid
#: up and grades it live instead: puzzles stay in the tens (the demo pool's most is 35), a full grid reaches
#: tens of thousands. Bounds a lookup's time in the loop to a few milliseconds whatever the grid.
LOOKUP_LAYOUTS: Final = 256
#: The most pairs of row and column orders tried to map a record onto a grid sent (see
#: :func:`sudokupool.sudoku.layouts.moves_between`): a pool puzzle's lines are mostly told apart, so one or a few.
LOOKUP_ORDERS: Final = 64
#: Fewer givens than this never have a single solution, so such a grid is in no pool.
MIN_CLUES: Final = 17
#: No minimal puzzle has more givens than this, and every puzzle ``sudokupool build`` makes is minimal: a grid with
#: more is graded live rather than looked up (a full grid's canonical search is the slowest there is).
MAX_CLUES: Final = 40
IDENTITY: Final = Relayout(tuple(range(81)), tuple(range(1, 10)), False)
#: The longest pencil-mark text read: 81 fields of up to nine digits and the commas between them (as the hint
#: reads them; its module is not imported here, see sudokupool.sudoku.answers).
MAX_CANDIDATES_TEXT: Final = 81 * 10 - 1
#: The longest grid or board text read (81 cells; a longer one is refused before any other work).
MAX_GRID_TEXT: Final = 81
_STATUS: Final = {"ok": b"200", "invalid": b"400", "unsolvable": b"422", "marks": b"422"}
ENGINE_BUSY: Final = "the server is busy with other grades and hints; retry after the seconds in Retry-After"
ENGINE_TOO_LONG: Final = "this grade or hint took longer than the server allows; retry later"
BOARD_ERROR: Final = "board is required: the player's 81 cells (the givens and their entries, '.' or '0' for empty)"


def _answer(answer: Answer) -> bytes:
    kind, body = answer
    return _STATUS[kind] + body


def _grid(param: str | None, *, clashes: bool = True) -> tuple[str | None, bytes | None]:
    """The normalised grid of the path, or the cached form of the 400 that says what is wrong with it (with
    ``clashes`` false, a grid whose givens clash is not refused here: see :func:`_clash`)."""
    text = param or ""
    if len(text) > MAX_GRID_TEXT:
        return None, _answer(grid_error("invalid", f"a grid has 81 cells, got more than {MAX_GRID_TEXT}"))
    try:
        grid = parse_grid(text)
    except GridError as exc:
        return None, _answer(grid_error("invalid", str(exc)))
    return grid, _clash(grid) if clashes else None


def _clash(grid: str) -> bytes | None:
    """The cached form of the 400 that names the first clash of ``grid``'s givens, or None when they clash nowhere."""
    clash = first_conflict(grid)
    if clash is None:
        return None
    return _answer(grid_error("invalid", f"the givens clash: {clash}", conflicting_cells(grid)))


def lookup(pool: Pool, grid: str) -> tuple[int, Relayout] | None:
    """The pool's record of ``grid`` in any layout, and the move from the record's layout to ``grid``'s
    (:data:`IDENTITY` in the layout the pool holds it); None when the pool does not hold it (or its canonical
    search would take longer than a lookup may)."""
    if not MIN_CLUES <= clue_count(grid) <= MAX_CLUES:
        return None
    held_index = _grids(pool).find(pool, grid)
    if held_index is not None:
        return held_index, IDENTITY
    found, settled = _by_layout(pool, grid)
    if found is not None or settled:
        return found
    here = canonical_transform_within(grid, LOOKUP_LAYOUTS)
    if here is None:
        return None
    index = pool.find(canonical_id(here[0]))
    if index is None:
        return None
    held = pool.puzzle(index)
    if held == grid:
        return index, IDENTITY
    form, there = _held_transform(held)
    if form != here[0]:
        return None
    return index, between(there, here[1])


def _by_layout(pool: Pool, grid: str) -> tuple[tuple[int, Relayout] | None, bool]:
    """The pool's record of ``grid`` in another layout and the one move onto ``grid``, found by the grid's layout
    key, and whether that settles it: None and True when the pool holds no layout of ``grid``; None and False when
    the canonical forms must decide (the layout index not complete yet, or a bound reached, or a puzzle with
    symmetries, whose moves are several: the canonical forms choose among them, as they always have)."""
    candidates, complete = _layouts(pool).candidates(pool, layout_key(grid))
    for index in candidates:
        moves = moves_between(pool.puzzle(index), grid, LOOKUP_ORDERS)
        if moves is None or len(moves) > 1:
            return None, False
        if moves:
            return (index, moves[0]), True
    return None, complete


_Index = TypeVar("_Index")

#: Each live pool's index of its grids as it holds them (an old pool's goes with it: the index holds no
#: reference to its pool).
_GRID_INDEXES: Final[WeakKeyDictionary[Pool, GridIndex]] = WeakKeyDictionary()


def _grids(pool: Pool) -> GridIndex:
    return _index_of(_GRID_INDEXES, pool, GridIndex)


#: Each live pool's index of its records by layout key (as :data:`_GRID_INDEXES`).
_LAYOUT_INDEXES: Final[WeakKeyDictionary[Pool, LayoutIndex]] = WeakKeyDictionary()


def _layouts(pool: Pool) -> LayoutIndex:
    return _index_of(_LAYOUT_INDEXES, pool, LayoutIndex)


def _index_of(indexes: WeakKeyDictionary[Pool, _Index], pool: Pool, make: Callable[[int], _Index]) -> _Index:
    """``pool``'s entry in ``indexes`` (an index, the prepared records), made by ``make`` (given ``len(pool)``) the
    first time it is asked for."""
    index = indexes.get(pool)
    if index is None:
        index = indexes[pool] = make(len(pool))
    return index


class PreparedRecords:
    """The records of one pool last moved to another layout, read and their solve paths prepared for moving
    (:func:`~sudokupool.sudoku.answers.prepare_record`): a record asked for again in any layout is moved by lookups,
    its body not read again. Preparing a record costs about one move more, once. An LRU of ``budget`` bytes at most
    (each record counted as :attr:`~sudokupool.sudoku.answers.PreparedRecord.size`; a pool's records never change);
    with a budget of 0, none is kept and each move reads the record."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._bytes = 0
        self._records: OrderedDict[int, tuple[PreparedRecord | None, int]] = OrderedDict()

    def get(self, index: int, body: Callable[[], bytes]) -> PreparedRecord | None:
        """Record ``index`` prepared, its body read by ``body`` when it is not kept yet; None when none are kept, or
        when it cannot be prepared (it is moved as it is read)."""
        if not self._budget:
            return None
        records = self._records
        kept = records.get(index)
        if kept is not None:
            records.move_to_end(index)
            return kept[0]
        prepared = prepare_record(body())
        size = _UNPREPARED_SIZE if prepared is None else prepared.size
        if size <= self._budget:
            records[index] = (prepared, size)
            self._bytes += size
            while self._bytes > self._budget:
                self._bytes -= records.popitem(last=False)[1][1]
        return prepared

    @property
    def bytes(self) -> int:
        """About the bytes the records kept hold."""
        return self._bytes


#: What a record that cannot be prepared is counted as while it is kept as such.
_UNPREPARED_SIZE: Final = 100
#: Each live pool's prepared records (as :data:`_GRID_INDEXES`).
_PREPARED: Final[WeakKeyDictionary[Pool, PreparedRecords]] = WeakKeyDictionary()


@lru_cache(maxsize=1024)
def _held_transform(puzzle: str) -> tuple[str, Transform]:
    """The canonical form and transformation of a puzzle the pool holds: asked again for each of its layouts, so
    the last 1,024 are kept (about 1.5 KB each)."""
    return canonical_transform(puzzle)


def _cache_control(endpoints: Endpoints) -> Header:
    return (b"cache-control", b"public, max-age=%d" % endpoints.runtime.settings.grid_max_age)


def _reply(endpoints: Endpoints, scope: Scope, data: bytes) -> Reply:
    """The cached ``data`` as a reply: its status, its body, an ETag and the long ``Cache-Control``."""
    status, body = int(data[:3]), data[3:]
    # ISA-L's CRC-32 is zlib's, in a quarter of the time (a moved record is about 15 KB).
    etag = f'W/"{crc32(data):08x}{len(data):08x}"'
    headers = [(b"etag", etag.encode()), _cache_control(endpoints)]
    if status == 200 and not_modified(scope, etag):
        return Reply(304, headers, b"")
    return Reply(status, [JSON, *headers], body)


async def _answer_of(
    endpoints: Endpoints, scope: Scope, key: tuple[str, ...], cost: int, job: Callable[[], Awaitable[Answer]]
) -> Reply:
    """The cached answer for ``key``, else ``job``'s (charged ``cost``, run in the work pool)."""
    answers = endpoints.runtime.answers
    if not answers.covers(key):
        await charge(scope, cost)

    async def produce() -> bytes:
        return _answer(await job())

    try:
        data = await answers.get(key, produce)
    except WorkQueueFull as exc:
        raise ApiError(ENGINE_BUSY, status=503, headers={"Retry-After": str(exc.retry_after)}) from None
    except WorkBudgetExceeded as exc:
        raise ApiError(ENGINE_TOO_LONG, status=503, headers={"Retry-After": str(exc.retry_after)}) from None
    except WorkDropped as exc:
        raise work_error(exc) from None
    return _reply(endpoints, scope, data)


async def grid(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """``GET /grids/{grid}``: the pool's record moved to the grid's layout, or its live grade."""
    # Givens that clash are looked for only in a grid the pool does not hold: a layout of a pool puzzle has none.
    asked, refusal = _grid(param, clashes=False)
    if asked is None:
        assert refusal is not None
        return _reply(endpoints, scope, refusal)
    runtime = endpoints.runtime
    answers, work = runtime.answers, runtime.work
    key = ("grid", asked)
    if not answers.covers(key):
        if not single_steps.table.cache_info().currsize:
            await asyncio.to_thread(_make_singles)
        held = _held(runtime.current(), asked, runtime.settings.engine_prepared_bytes)
        if held is not None:
            # A lookup: moved in the loop, never queued, costs what a lookup costs; kept as a computed answer is.
            answers.put(key, held)
            return _reply(endpoints, scope, held)
        refusal = _clash(asked)
        if refusal is not None:
            return _reply(endpoints, scope, refusal)
    left = left_of(scope)
    return await _answer_of(
        endpoints,
        scope,
        key,
        runtime.settings.cost_grade,
        lambda: work.submit(grade_answer, asked, kind="grade", left=left),
    )


#: Held while the singles' steps table is made, so that grids asked for at once wait for one making of it.
_MAKING_SINGLES: Final = threading.Lock()


def _make_singles() -> None:
    """Make the singles' steps table (:mod:`sudokupool.sudoku.single_steps`) that moves a record to another layout, in
    a thread, the first time a grid is asked for: an idle worker holds none of it, and the loop keeps serving while it
    is made (docs/benchmarks.md gives both figures)."""
    with _MAKING_SINGLES:
        single_steps.table()


def _held(pool: Pool, asked: str, kept: int) -> bytes | None:
    """The cached form of the pool's record of ``asked`` moved to its layout, or None where the pool holds no such
    grid; records moved to another layout are kept prepared in ``kept`` bytes (:class:`PreparedRecords`). A function
    of its own, so that no frame waiting for a live grade keeps the pool (a swap waits for those)."""
    found = lookup(pool, asked)
    if found is None:
        return None
    index, move = found
    solution = pool.solution(index)
    try:
        if move is not IDENTITY:
            records = _index_of(_PREPARED, pool, lambda _: PreparedRecords(kept))
            prepared = records.get(index, partial(pool.body, index))
            held = None if prepared is None else moved_prepared(prepared, solution, asked, move)
            if held is not None:
                return b"200" + held
        body = pool.body(index)
    except DamagedRecord:  # logged once by the pool
        raise ApiError(DAMAGED, status=500) from None
    # The record's prepared body needs no reading in the layout the pool holds it (a third of the time).
    held = held_record(body, solution, asked) if move is IDENTITY else moved_body(body, solution, asked, move)
    return b"200" + (held or moved_record(orjson.loads(body), solution, asked, move))


def _held_solution(pool: Pool, asked: str) -> str | None:
    """The pool's solution of ``asked`` in its layout, or None (the pool not kept: see :func:`_held`)."""
    found = lookup(pool, asked)
    return None if found is None else found[1].grid(pool.solution(found[0]))


def _board(scope: Scope) -> tuple[str, str | None]:
    params = queries(scope["query_string"], ("board", "candidates")) if scope["query_string"] else {}
    board = params.get("board")
    if not board:
        raise BadRequest(BOARD_ERROR)
    if len(board) > MAX_GRID_TEXT:
        raise BadRequest(f"board: a grid has 81 cells, got more than {MAX_GRID_TEXT}")
    candidates = params.get("candidates")
    if candidates is not None and len(candidates) > MAX_CANDIDATES_TEXT:
        raise BadRequest(f"candidates: at most {MAX_CANDIDATES_TEXT} characters")
    return board, candidates


def _hint_key(puzzle: str, board: str, candidates: str | None) -> tuple[str, ...]:
    return ("hint", puzzle, board, "" if candidates is None else "," + candidates)


async def _hint(endpoints: Endpoints, scope: Scope, puzzle: str, solution: str | None) -> Reply:
    board, candidates = _board(scope)
    runtime = endpoints.runtime
    work = runtime.work
    left = left_of(scope)
    return await _answer_of(
        endpoints,
        scope,
        _hint_key(puzzle, board, candidates),
        runtime.settings.cost_hint,
        lambda: work.submit(hint_answer, puzzle, solution, board, candidates, kind="hint", left=left),
    )


async def grid_hint(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """``GET /grids/{grid}/hint?board=&candidates=``: a hint for the player's board in any grid."""
    asked, refusal = _grid(param)
    if asked is None:
        assert refusal is not None
        return _reply(endpoints, scope, refusal)
    board, candidates = _board(scope)  # a malformed query is a 400 before any other work
    solution = None
    if not endpoints.runtime.answers.covers(_hint_key(asked, board, candidates)):
        # The pool's solution, when it holds the grid, spares the job a solve.
        solution = _held_solution(endpoints.runtime.current(), asked)
    return await _hint(endpoints, scope, asked, solution)


async def puzzle_hint(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """``GET /puzzles/{id}/hint?board=&candidates=``: a hint for the player's board in a pool puzzle."""
    puzzle, solution = _puzzle_and_solution(endpoints, param)
    return await _hint(endpoints, scope, puzzle, solution)


def _puzzle_and_solution(endpoints: Endpoints, param: str | None) -> tuple[str, str]:
    """The puzzle ``param`` names and its solution (the pool not kept: see :func:`_held`)."""
    pool, index = endpoints.find(param)
    return pool.puzzle(index), pool.solution(index)
