"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import httpx

from bench.servers import free_port

__all__ = ["MINUTE", "free_port", "running"]

if TYPE_CHECKING:
    from sudokupool.app import SudokuPool

#: A whole clock minute (a rate-limit window starts here).
MINUTE = 1_800_000_000 - 1_800_000_000 % 60


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
