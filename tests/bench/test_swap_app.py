"""The bench's swap trigger (bench/peers.py (swap_app)) reloads the pool as a live sync does, and says when a reload
failed, so the swap benchmarks measure swaps rather than wait for one that never ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from bench.peers import SwapApp
from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.loading.packing import write_pack
from tests.factories import write_export
from tests.helpers import running

pytestmark = pytest.mark.anyio

EXPORT = "pool-20260101T000000Z.ndjson.gz"


async def swapped(client: httpx.AsyncClient) -> dict[str, Any]:
    assert (await client.get("/__bench/swap")).status_code == 200
    with anyio.fail_after(10):
        while not (status := (await client.get("/__bench/swap-status")).json())["done"]:  # noqa: ASYNC110 - polled over HTTP, as the bench does
            await asyncio.sleep(0.02)
    return status  # type: ignore[no-any-return]


async def test_a_bench_swap_reloads_the_pack_in_the_background(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    write_export(tmp_path / EXPORT, records)
    await write_pack(tmp_path / EXPORT)
    app = SwapApp(create_app(Settings(exports=str(tmp_path), sync_interval=0)))
    async with running(app.service) as _:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            # Its identity, not a reference: the swap waits (up to 5 s) for the old pool's last user to let go.
            # The new pool is made while the old one lives, so the two cannot share an id.
            first = id(app.service.runtime.current())
            status = await swapped(client)
            assert "error" not in status and status["puzzles"] == len(records)
            assert id(app.service.runtime.current()) != first
            assert (await client.get("/api/v1/stats")).json()["total"] == len(records)


async def test_a_failed_bench_swap_says_why(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    write_export(tmp_path / EXPORT, records)
    app = SwapApp(create_app(Settings(exports=str(tmp_path), sync_interval=0)))
    async with running(app.service) as _:
        (tmp_path / EXPORT).write_bytes(b"not gzip")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            status = await swapped(client)
            assert status["done"] and "LoadError" in status["error"]
