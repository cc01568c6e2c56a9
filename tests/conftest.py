from __future__ import annotations

from collections import Counter
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

#: Fixtures that start a real server: valkey, a valkey cluster, SeaweedFS, the service the browser drives.
#: A test that uses one, directly or through another fixture, is marked ``slow`` (tests that start the
#: service or another process themselves carry the mark in their module).
SERVER_FIXTURES = frozenset(
    {"valkey_session", "valkey_cluster_session", "valkey_restartable", "seaweed", "seaweed_restartable", "web_server"}
)

_left_out: list[pytest.Item] = []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tryfirst: the marks must be on before ``-m`` deselects by them.
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())) or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _left_out.extend(items)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say what a ``-m`` expression (``scripts/test --fast``) left out, file by file, so nothing is skipped unsaid."""
    expression = config.option.markexpr
    if not expression or not _left_out:
        return
    files = Counter(item.nodeid.split("::")[0] for item in _left_out)
    terminalreporter.section(f"left out by -m {expression!r}")
    terminalreporter.write_line(f"{len(_left_out)} tests in {len(files)} files, not run (scripts/test runs them):")
    for path, count in sorted(files.items()):
        terminalreporter.write_line(f"  {path}: {count}")


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
