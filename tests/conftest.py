from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.loading.pool import Pool
from tests.factories import EXPORT_NAME, build_pool, make_records, write_export

pytest_plugins = ["tests.seaweed", "tests.valkey"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def records() -> list[dict[str, Any]]:
    """40 genuine graded puzzles (deterministic seeds)."""
    return make_records(40)


@pytest.fixture(scope="session")
def export_dir(tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, Any]]) -> Path:
    directory = tmp_path_factory.mktemp("exports")
    write_export(directory / EXPORT_NAME, records)
    return directory


@pytest.fixture(scope="session")
def pool(records: list[dict[str, Any]]) -> Pool:
    return build_pool(records)


@pytest.fixture
async def client(pool: Pool) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(), pool=pool)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 4321))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client
