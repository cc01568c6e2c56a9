from __future__ import annotations

import asyncio
import gc
import random
import threading
import tracemalloc
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import orjson
import pytest

import sudokupool.app
from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from sudokupool.ratelimit.memory import MemoryStore
from sudokupool.sudoku.answers import held_record, moved_record
from sudokupool.sudoku.candidates import DIGITS_OF, Candidates
from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.grid import agrees, is_complete_solution
from sudokupool.sudoku.ids import puzzle_id
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.transform import IDENTITY_DIGITS, Transform, random_transform
from tests.factories import build_pool
from tests.helpers import MINUTE, FakeClock, demo_records, running

pytestmark = pytest.mark.anyio

# Hard grids no test pool holds (Sudoku Exchange's SE-rated sample, bench/data): live grades that take a while.
HARD = (
    "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......",
    "52...6.........7.13...........4..8..6......5...........418.........3..2...87.....",
    "6.....8.3.4.7.................5.4.7.3..2.....1.6.......2.....5.....8.6......1....",
)
# Rows and columns reversed within bands and the bands reversed: with a transposition, a quarter turn.
REVERSED = (8, 7, 6, 5, 4, 3, 2, 1, 0)
LAYOUTS = [
    pytest.param(Transform(), id="as-held"),
    pytest.param(Transform(True, REVERSED, tuple(range(9)), IDENTITY_DIGITS), id="rotated"),
    pytest.param(Transform(transpose=True), id="transposed"),
    pytest.param(Transform(digits=(9, 8, 7, 6, 5, 4, 3, 2, 1)), id="relabelled"),
    pytest.param(random_transform(random.Random(47)), id="all-at-once"),
]


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


async def _client(pool: Pool, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, pool=pool)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 4321))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver", timeout=60) as client:
            yield client
    finally:
        await app.runtime.work.aclose()


@pytest.fixture
async def engine(pool: Pool, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    # The window's clock stands a second into a minute: the counts of a test never straddle a window's end.
    clock = FakeClock(MINUTE + 1)
    monkeypatch.setattr(sudokupool.app, "make_store", lambda settings, **_: MemoryStore(clock=clock))
    async for client in _client(pool, Settings(limit_anonymous=1000)):
        yield client


def _remaining(response: httpx.Response) -> int:
    return int(response.headers["x-ratelimit-remaining"])


@pytest.mark.parametrize("move", LAYOUTS)
async def test_a_pool_puzzle_in_another_layout_gives_its_record_in_that_layout(
    engine: httpx.AsyncClient, records: list[dict[str, Any]], move: Transform
) -> None:
    record = records[3]
    grid = move.apply(record["puzzle"])
    before = _remaining(await engine.get("/api/v2/health"))
    response = await engine.get(f"/api/v2/grids/{grid.replace('.', '0')}")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=86400"
    assert _remaining(response) == before - 1  # a lookup's cost
    body = response.json()
    assert body["in_pool"] is True
    assert body["canonical_id"] == record["canonical_id"]
    assert (body["puzzle"], body["puzzle_id"], body["canonical"]) == (grid, puzzle_id(grid), record["canonical"])
    assert body["solution"] == move.apply(record["solution"])
    assert is_complete_solution(body["solution"]) and agrees(grid, body["solution"])
    assert replay(grid, body["solution"], body["solve_path"]) == []
    fields = ("difficulty", "score", "tier", "stars", "hardest_technique", "techniques", "tags", "created_at")
    assert {name: body[name] for name in fields} == {name: record[name] for name in fields}


async def test_the_same_grid_gives_the_same_bytes_and_revalidates(
    engine: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    grid = Transform(transpose=True).apply(records[4]["puzzle"])
    first = await engine.get(f"/api/v2/grids/{grid}")
    again = await engine.get(f"/api/v2/grids/{grid}")
    assert first.status_code == again.status_code == 200
    assert first.content == again.content
    assert first.headers["etag"] == again.headers["etag"]
    cached = await engine.get(f"/api/v2/grids/{grid}", headers={"If-None-Match": first.headers["etag"]})
    assert cached.status_code == 304
    assert cached.content == b""


async def test_a_grid_the_pool_lacks_is_graded_live_as_the_grader_does(engine: httpx.AsyncClient) -> None:
    grid = HARD[0]
    before = _remaining(await engine.get("/api/v2/health"))
    response = await engine.get(f"/api/v2/grids/{grid}")
    assert response.status_code == 200
    assert _remaining(response) == before - Settings().cost_grade
    body = response.json()
    assert body.pop("in_pool") is False
    assert body.pop("canonical_id") == "PSCRCAEZMH7WV"
    assert body == grade(grid).to_dict(grid)
    # Cached: the same bytes, at a lookup's cost.
    again = await engine.get(f"/api/v2/grids/{grid}")
    assert again.content == response.content
    assert _remaining(again) == _remaining(response) - 1


@pytest.mark.parametrize(
    ("grid", "status", "verdict", "cells"),
    [
        pytest.param("11" + "." * 79, 400, "invalid", ["r1c1", "r1c2"], id="clash"),
        pytest.param("1" * 80, 400, "invalid", [], id="short"),
        pytest.param("x" * 81, 400, "invalid", [], id="letters"),
        pytest.param("." * 81, 422, "multiple-solutions", [], id="empty"),
        pytest.param("12345678." + "." * 8 + "9" + "." * 63, 422, "no-solution", [], id="dead-end"),
    ],
)
async def test_grids_without_one_solution_say_why(
    engine: httpx.AsyncClient, grid: str, status: int, verdict: str, cells: list[str]
) -> None:
    response = await engine.get(f"/api/v2/grids/{grid}")
    assert response.status_code == status
    body = response.json()
    assert (body["status"], body["cells"]) == (verdict, cells)
    assert body["error"]


def _state_before(record: dict[str, Any], index: int) -> Candidates:
    cg = Candidates.from_puzzle(record["puzzle"])
    for step in record["solve_path"][:index]:
        for item in step["placements"]:
            cg.place((int(item["cell"][1]) - 1) * 9 + int(item["cell"][3]) - 1, item["digit"])
        for item in step["eliminations"]:
            cg.eliminate((int(item["cell"][1]) - 1) * 9 + int(item["cell"][3]) - 1, item["digit"])
    return cg


def _marks(cg: Candidates) -> str:
    return ",".join("" if cg.values[c] else "".join(map(str, DIGITS_OF[cg.cands[c]])) for c in range(81))


@pytest.mark.parametrize(
    "techniques",
    [
        pytest.param(("Naked Single", "Hidden Single", "Full House"), id="single"),
        pytest.param(("Naked Pair", "Naked Triple", "Hidden Pair", "Hidden Triple"), id="subset"),
        pytest.param(("X-Wing", "Swordfish", "Finned X-Wing"), id="fish"),
        pytest.param(("X-Chain", "XY-Chain", "AIC", "Discontinuous Nice Loop"), id="chain"),
    ],
)
async def test_the_hint_is_the_next_step_from_the_board_and_its_pencil_marks(
    engine: httpx.AsyncClient, demo: list[dict[str, Any]], techniques: tuple[str, ...]
) -> None:
    record, index = next(
        (r, i) for r in demo for i, step in enumerate(r["solve_path"]) if i > 0 and step["technique"] in techniques
    )
    cg = _state_before(record, index)
    before = _remaining(await engine.get("/api/v2/health"))
    response = await engine.get(
        f"/api/v2/grids/{record['puzzle']}/hint", params={"board": cg.grid(), "candidates": _marks(cg)}
    )
    assert response.status_code == 200
    assert _remaining(response) == before - Settings().cost_hint
    assert response.json() == {"status": "step", "wrong": [], "conflicting": [], "step": record["solve_path"][index]}


async def test_hints_name_mistakes_first_and_say_when_the_board_is_finished(
    engine: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    record = records[6]
    puzzle, solution, code = record["puzzle"], record["solution"], record["canonical_id"]
    empty = [c for c in range(81) if puzzle[c] == "."]
    # Two entries in one row: the first wrong, the second the same digit (a conflict).
    first = empty[0]
    second = next(c for c in empty[1:] if c // 9 == first // 9)
    board = list(puzzle)
    board[first] = solution[second]
    board[second] = solution[second]
    response = await engine.get(f"/api/v2/puzzles/{code}/hint", params={"board": "".join(board)})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "fix"
    assert body["wrong"] == [f"r{first // 9 + 1}c{first % 9 + 1}"]
    assert body["conflicting"] == [f"r{c // 9 + 1}c{c % 9 + 1}" for c in (first, second)]
    assert "step" not in body
    response = await engine.get(f"/api/v2/puzzles/{code}/hint", params={"board": solution})
    assert response.json() == {"status": "finished", "wrong": [], "conflicting": []}


async def test_hints_refuse_boards_without_the_givens_and_marks_that_erase_a_needed_digit(
    engine: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    record = records[7]
    puzzle, solution, code = record["puzzle"], record["solution"], record["canonical_id"]
    given = next(c for c in range(81) if puzzle[c] != ".")
    response = await engine.get(
        f"/api/v2/puzzles/{code}/hint", params={"board": puzzle[:given] + "." + puzzle[given + 1 :]}
    )
    assert response.status_code == 400
    assert "must hold the puzzle's given" in response.json()["error"]
    response = await engine.get(f"/api/v2/puzzles/{code}/hint")
    assert response.status_code == 400
    assert response.json()["error"].startswith("board is required")
    cg = Candidates.from_puzzle(puzzle)
    cell = next(c for c in range(81) if not cg.values[c] and len(DIGITS_OF[cg.cands[c]]) > 1)
    fields = _marks(cg).split(",")
    fields[cell] = fields[cell].replace(solution[cell], "")
    response = await engine.get(
        f"/api/v2/puzzles/{code}/hint", params={"board": puzzle, "candidates": ",".join(fields)}
    )
    assert response.status_code == 422
    name = f"r{cell // 9 + 1}c{cell % 9 + 1}"
    assert response.json() == {
        "error": f"candidates: the pencil marks of {name} leave out a digit it needs",
        "cells": [name],
    }
    response = await engine.get("/api/v2/puzzles/0000000000000/hint", params={"board": puzzle})
    assert response.status_code == 404


async def test_a_tiny_time_budget_gives_a_503_and_the_service_keeps_answering(
    pool: Pool, records: list[dict[str, Any]]
) -> None:
    async for client in _client(pool, Settings(work_budget_seconds=0.001)):
        response = await client.get(f"/api/v2/grids/{HARD[1]}")
        assert response.status_code == 503
        assert int(response.headers["retry-after"]) >= 1
        assert response.json() == {"error": "this grade or hint took longer than the server allows; retry later"}
        # Lookups never queue, and the pool takes the next job in a fresh process.
        grid = Transform(transpose=True).apply(records[0]["puzzle"])
        assert (await client.get(f"/api/v2/grids/{grid}")).status_code == 200


async def test_past_the_queue_bound_a_live_grade_is_a_503_with_retry_after(pool: Pool) -> None:
    async for client in _client(pool, Settings(work_processes=1, work_queue=0)):
        answers = await asyncio.gather(*(client.get(f"/api/v2/grids/{grid}") for grid in HARD))
        statuses = sorted(response.status_code for response in answers)
        assert statuses[0] == 200
        assert 503 in statuses
        busy = next(response for response in answers if response.status_code == 503)
        assert int(busy.headers["retry-after"]) >= 1
        assert busy.json() == {
            "error": "the server is busy with other grades and hints; retry after the seconds in Retry-After"
        }


def test_the_serving_worker_never_imports_the_grader() -> None:
    # The finders are 2 MB of a worker's private memory: only the work processes that grade load them.
    import subprocess
    import sys

    code = (
        "import sys, sudokupool.app, sudokupool.api.engine; "
        "heavy = ('sudokupool.sudoku.techniques', 'sudokupool.sudoku.grader'); "
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_the_engine_reads_as_much_pencil_marks_as_the_hint() -> None:
    from sudokupool.api import engine
    from sudokupool.sudoku import hint

    assert engine.MAX_CANDIDATES_TEXT == hint.MAX_CANDIDATES_TEXT == 809


def test_only_grids_with_the_givens_of_a_minimal_puzzle_are_looked_up(
    pool: Pool, records: list[dict[str, Any]]
) -> None:
    from sudokupool.api.engine import lookup

    record = records[1]
    moved = Transform(transpose=True).apply(record["puzzle"])
    found = lookup(pool, moved)
    assert found is not None
    index, move = found
    assert pool.puzzle(index) == record["puzzle"] and move.grid(record["puzzle"]) == moved
    # A full grid (the slowest canonical search there is) and a grid of 16 givens are never looked up.
    assert lookup(pool, record["solution"]) is None
    sparse = "".join(ch if i < 16 else "." for i, ch in enumerate(c for c in record["solution"]))
    assert lookup(pool, sparse) is None


def test_a_grid_in_the_layout_the_pool_holds_is_answered_from_its_body_as_from_its_record(
    demo: list[dict[str, Any]],
) -> None:
    from sudokupool.api.engine import IDENTITY

    pool = build_pool(demo[::4])
    for index in range(len(pool)):
        body, solution, grid = pool.body(index), pool.solution(index), pool.puzzle(index)
        assert held_record(body, solution, grid) == moved_record(orjson.loads(body), solution, grid, IDENTITY)
    # A body that does not say what the grid's answer says is read instead.
    body, solution, grid = pool.body(0), pool.solution(0), pool.puzzle(0)
    assert held_record(body, solution, pool.puzzle(1)) is None
    symmetric = b'"symmetric":true' if b'"symmetric":true' in body else b'"symmetric":false'
    flipped = body.replace(symmetric, b'"symmetric":false' if b"true" in symmetric else b'"symmetric":true', 1)
    assert held_record(flipped, solution, grid) is None
    assert held_record(body.replace(b'"puzzle_id":"', b'"puzzle_id":"0', 1)[:-1], solution, grid) is None


def test_a_pool_whose_grids_were_looked_up_goes_once_it_is_swapped_out(records: list[dict[str, Any]]) -> None:
    from sudokupool.api.engine import lookup

    old = build_pool(records[:5])
    assert lookup(old, records[2]["puzzle"]) is not None  # its grid index made
    gone = weakref.ref(old)
    del old
    gc.collect()
    assert gone() is None


def test_another_layout_is_answered_from_its_body_as_from_its_record(demo: list[dict[str, Any]]) -> None:
    from sudokupool.api.engine import lookup
    from sudokupool.sudoku.answers import moved_body

    pool = build_pool(demo[::8])
    rng = random.Random(48)
    for index in range(len(pool)):
        grid = random_transform(rng).apply(pool.puzzle(index))
        found = lookup(pool, grid)
        assert found is not None and found[0] == index
        move = found[1]
        body, solution = pool.body(index), pool.solution(index)
        expected = moved_record(orjson.loads(body), solution, grid, move)
        assert moved_body(body, solution, grid, move) == expected
    # A body not written as the pack writes one is read instead.
    assert moved_body(body.replace(b'"solve_path":[', b'"solve_path": [', 1), solution, grid, move) is None
    assert moved_body(body.replace(b'],"source":', b'] ,"source":', 1), solution, grid, move) is None
    assert moved_body(body[:-1], solution, grid, move) is None


async def test_the_singles_steps_are_made_off_the_loop_at_the_first_grid_asked(
    pool: Pool, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sudokupool.api import engine
    from sudokupool.sudoku import single_steps

    single_steps.table.cache_clear()
    made_in: list[threading.Thread] = []
    make = engine._make_singles
    monkeypatch.setattr(engine, "_make_singles", lambda: made_in.append(threading.current_thread()) or make())
    async with running(create_app(Settings(limit_anonymous=1000), pool=pool)) as client:
        assert single_steps.table.cache_info().currsize == 0  # an idle worker holds none of it
        moved = [layout.values[0].apply(records[3]["puzzle"]) for layout in LAYOUTS]
        answers = await asyncio.gather(*(client.get(f"/api/v2/grids/{grid}") for grid in moved))
        assert [answer.status_code for answer in answers] == [200] * len(moved)
        assert single_steps.table.cache_info().currsize == 1
        # Made in threads of their own, each first ask waiting for one making (later asks find it made).
        assert made_in and threading.main_thread() not in made_in
        assert single_steps.table.cache_info().misses == 1


def test_a_record_kept_prepared_moves_as_it_is_read_and_its_body_is_read_once(
    demo: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sudokupool.api import engine

    kept, unkept = build_pool(demo[::40]), build_pool(demo[::40])
    reads: dict[Pool, list[int]] = {kept: [], unkept: []}
    for pool in reads:
        body = pool.body
        monkeypatch.setattr(pool, "body", lambda index, pool=pool, body=body: reads[pool].append(index) or body(index))
    rng = random.Random(49)
    count = len(kept)
    asked = [random_transform(rng).apply(kept.puzzle(index % count)) for index in range(3 * count)]
    # Each record asked in three layouts: read once while kept prepared, at each ask when none are kept.
    assert [engine._held(kept, grid, 1 << 20) for grid in asked] == [engine._held(unkept, grid, 0) for grid in asked]
    assert sorted(reads[kept]) == list(range(count))
    assert sorted(reads[unkept]) == sorted(3 * list(range(count)))


def test_prepared_records_are_bounded_by_their_bytes_and_read_again_once_dropped(demo: list[dict[str, Any]]) -> None:
    from sudokupool.api.engine import PreparedRecords
    from sudokupool.sudoku.answers import prepare_record

    pool = build_pool(demo[:5])
    reads: list[int] = []

    def body(index: int) -> Callable[[], bytes]:
        return lambda: reads.append(index) or pool.body(index)

    sizes = [prepare_record(pool.body(index)).size for index in range(3)]  # type: ignore[union-attr]
    kept = PreparedRecords(sizes[0] + sizes[1] + max(sizes[2], sizes[1]) - 1)  # any two of the three, never all
    for index in (0, 1, 0, 2, 0, 1):
        assert kept.get(index, body(index)) is not None
    # 0 stays (the most recently used of the first two when 2 comes), 1 is dropped for 2 and read again.
    assert reads == [0, 1, 2, 1]
    assert kept.bytes == sizes[0] + sizes[1]
    assert PreparedRecords(0).get(0, body(0)) is None and reads == [0, 1, 2, 1]
    # A body not written as the pack writes one is kept as such: read once, then moved as it is read.
    damaged = PreparedRecords(1 << 20)
    assert damaged.get(3, lambda: reads.append(3) or pool.body(3)[:-1]) is None
    assert damaged.get(3, lambda: reads.append(3) or pool.body(3)[:-1]) is None
    assert reads.count(3) == 1


def test_a_prepared_record_says_about_the_bytes_it_holds(demo: list[dict[str, Any]]) -> None:
    from sudokupool.sudoku import single_steps
    from sudokupool.sudoku.answers import prepare_record

    single_steps.table()
    pool = build_pool(demo[::20])
    bodies = [pool.body(index) for index in range(len(pool))]
    prepare_record(bodies[0])  # the literals every path shares, kept once
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        kept = [prepare_record(body) for body in bodies]
        held = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    said = sum(record.size for record in kept if record is not None)
    assert 0.8 < said / held < 1.25, (said, held)


def test_a_layout_found_by_its_key_moves_the_record_as_the_canonical_forms_do(
    pool: Pool, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sudokupool.api import engine
    from sudokupool.sudoku.canonical import canonical_transform
    from sudokupool.sudoku.relayout import between

    rng = random.Random(49)
    asked = [random_transform(rng).apply(record["puzzle"]) for record in records]
    engine.lookup(pool, asked[0])  # indexes the 40 records
    # Found by the layout index, no canonical search: the move the canonical forms give.
    monkeypatch.setattr(engine, "canonical_transform_within", lambda *_: pytest.fail("searched"))
    for number, (record, grid) in enumerate(zip(records, asked, strict=True)):
        found = engine.lookup(pool, grid)
        assert found is not None and found[0] == number
        expected = between(canonical_transform(record["puzzle"])[1], canonical_transform(grid)[1])
        assert (found[1].cells, found[1].digits, found[1].transposes) == (
            expected.cells,
            expected.digits,
            expected.transposes,
        )
    # A grid no record is a layout of is settled by the index too: graded live, no search first.
    assert engine.lookup(pool, HARD[0]) is None


def test_a_puzzle_with_symmetries_is_moved_as_its_canonical_forms_say(
    pool: Pool, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sudokupool.api import engine

    grid = Transform(transpose=True).apply(records[5]["puzzle"])
    (only,) = engine.moves_between(records[5]["puzzle"], grid, engine.LOOKUP_ORDERS) or []
    expected = engine.lookup(pool, grid)
    # Were the puzzle to have two moves onto the grid, the canonical forms would choose between them.
    monkeypatch.setattr(engine, "moves_between", lambda *_: [engine.IDENTITY, only])
    assert engine.lookup(pool, grid) == expected
    searched: list[str] = []
    monkeypatch.setattr(engine, "canonical_transform_within", lambda grid, _: searched.append(grid))
    assert engine.lookup(pool, grid) is None and searched == [grid]
