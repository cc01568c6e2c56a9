"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import gzip
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import orjson

from sudokupool.config import BUNDLED_SNAPSHOTS
from support.servers import free_port

__all__ = ["MINUTE", "FakeClock", "demo_records", "free_port", "running", "wait_until", "wait_until_async"]

if TYPE_CHECKING:
    from sudokupool.app import SudokuPool

#: A whole clock minute (a rate-limit window starts here).
MINUTE = 1_800_000_000 - 1_800_000_000 % 60


class FakeClock:
    """A clock for code that takes one (``clock=``, ``sleep=``): it reads ``now``, which moves only when a test
    sets or advances it, or when the code under test sleeps on it (each sleep is recorded in ``slept``)."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def wait_until(
    condition: Callable[[], bool], what: str, *, seconds: float = 10.0, log: Callable[[], str] = str
) -> None:
    """Poll ``condition`` (what a client sees of a real server or process) until it holds; fail after ``seconds``
    with ``what`` and ``log()`` (a bound on a wait, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen within {seconds} s\n{log()}")
        time.sleep(0.05)


async def wait_until_async(
    condition: Callable[[], bool | Awaitable[bool]], what: str = "the condition", *, seconds: float = 10.0
) -> None:
    """``wait_until`` on the event loop: ``condition`` may be a coroutine function (an HTTP call through ASGI)."""
    deadline = time.monotonic() + seconds
    while True:
        outcome = condition()
        if await outcome if inspect.isawaitable(outcome) else outcome:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen within {seconds} s")
        await anyio.sleep(0.01)


@asynccontextmanager
async def running(app: SudokuPool) -> AsyncIterator[httpx.AsyncClient]:
    """``app`` between its lifespan's startup and shutdown (httpx's ASGITransport runs no lifespan), with a
    client that calls it from 203.0.113.7."""
    await app.startup()
    try:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client
    finally:
        await app.shutdown()


def demo_records() -> list[dict[str, Any]]:
    """The records of the demo pool's newest export (``snapshots/``), read afresh."""
    exports = sorted(BUNDLED_SNAPSHOTS.glob("pool-*.ndjson.gz"))
    assert exports, f"no demo export in {BUNDLED_SNAPSHOTS}"
    with gzip.open(exports[-1]) as handle:
        return [orjson.loads(line) for line in handle]
