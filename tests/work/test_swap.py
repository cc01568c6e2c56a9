"""A request waiting for computed work does not hold the pool it was answered from: a sync's swap lets the old
pool go at once (it waits, up to ``RETIRE_SECONDS``, for every request that still holds it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from sudokupool import state
from sudokupool.app import SudokuPool, create_app
from sudokupool.config import Settings
from tests.factories import build_pool
from tests.helpers import running

pytestmark = pytest.mark.anyio


class HeldWork:
    """The app's work pool with every job held until :attr:`release` is set (the job then runs here)."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def submit(self, function: Callable[..., Any], *args: Any, kind: str = "job", left: Any = None) -> Any:
        self.entered.set()
        await self.release.wait()
        return function(*args)


async def swap_while_held(app: SudokuPool, ask: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    held = HeldWork()
    monkeypatch.setattr(app.runtime.work, "submit", held.submit)
    monkeypatch.setattr(state, "RETIRE_SECONDS", 3600.0)  # a swap that waits for a holder waits for good
    request = asyncio.ensure_future(ask())
    await asyncio.wait_for(held.entered.wait(), 30)
    install = asyncio.ensure_future(app.runtime.install(build_pool([], loaded_at=1_795_000_001)))
    done, _ = await asyncio.wait({install, request}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    held.release.set()
    response: httpx.Response = await request
    await install
    assert done == {install}, "the swap waited for the request that waits for its job"
    assert response.status_code == 200


async def test_a_render_waiting_for_the_work_pool_does_not_hold_the_pool_a_swap_lets_go(
    records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(Settings(), pool=build_pool(records[:5]))
    code = records[0]["canonical_id"]
    async with running(app) as client:
        await swap_while_held(app, lambda: client.get(f"/api/v1/puzzles/{code}/image?size=300"), monkeypatch)


async def test_a_print_sheet_waiting_for_the_work_pool_does_not_hold_the_pool_a_swap_lets_go(
    records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(Settings(), pool=build_pool(records[:5]))
    code = records[0]["canonical_id"]
    async with running(app) as client:
        await swap_while_held(app, lambda: client.get(f"/print?ids={code}"), monkeypatch)


@pytest.mark.parametrize("ask", ["grade", "grid-hint", "puzzle-hint"])
async def test_a_grade_or_hint_waiting_for_the_work_pool_does_not_hold_the_pool_a_swap_lets_go(
    records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, ask: str
) -> None:
    app = create_app(Settings(), pool=build_pool(records[:5]))
    code, held = records[0]["canonical_id"], records[0]["puzzle"]
    other = records[10]["puzzle"]  # a grid this pool does not hold: graded live
    path = {
        "grade": f"/api/v1/grids/{other}",
        "grid-hint": f"/api/v1/grids/{held}/hint?board={held}",
        "puzzle-hint": f"/api/v1/puzzles/{code}/hint?board={held}",
    }[ask]
    async with running(app) as client:
        await swap_while_held(app, lambda: client.get(path), monkeypatch)
