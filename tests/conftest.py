from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import settings

from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from tests.factories import EXPORT_NAME, build_pool, make_records, write_export

pytest_plugins = ["tests.seaweed", "tests.valkey"]

# No deadline for property tests: a deadline is a timing assertion, and a loaded machine misses it (timing goals
# belong in bench/). Each test's own ``@settings`` starts from this profile.
settings.register_profile("sudokupool", deadline=None)
settings.load_profile("sudokupool")

#: Fixtures that start a real server: valkey, a valkey cluster, SeaweedFS, the service the browser drives.
#: A test that uses one, directly or through another fixture, is marked ``slow`` (tests that start the
#: service or another process themselves carry the mark in their module).
SERVER_FIXTURES = frozenset(
    {"valkey_session", "valkey_cluster_session", "valkey_restartable", "seaweed", "seaweed_restartable", "web_server"}
)

#: The node ids a ``-m`` expression left out: this process's own, or (under pytest-xdist, whose workers collect
#: and deselect) those the workers report as they finish.
_left_out: set[str] = set()
_LEFT_OUT = "sudokupool_left_out"
#: Scopes of a fixture shared by tests of one file.
SHARED_SCOPES = frozenset({"module", "class", "package"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: the marks must be on before ``-m`` deselects by them.
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())) or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
    _refuse_ids_that_are_shared_or_made_up(items)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        for item in items:
            if shares_fixtures_of_its_file(item):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def _refuse_ids_that_are_shared_or_made_up(items: list[pytest.Item]) -> None:
    """Stop the run if two tests share a node id (pytest-xdist would run them as one, the others never) or a
    parametrised test's id is pytest's made-up ``argname0`` (name such cases with ``pytest.param(..., id=)``)."""
    shared = sorted(nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1)
    made_up = sorted(
        item.nodeid
        for item in items
        if (callspec := getattr(item, "callspec", None)) is not None
        and any(f"{name}{index}" in callspec.id.split("-") for name, index in callspec.indices.items())
    )
    if shared or made_up:
        raise pytest.UsageError(
            "tests need ids of their own and readable ones:\n"
            + "".join(f"  shared: {nodeid}\n" for nodeid in shared)
            + "".join(f"  made up: {nodeid}\n" for nodeid in made_up)
        )


def shares_fixtures_of_its_file(item: pytest.Item) -> bool:
    """Whether ``item`` uses a fixture it shares with other tests of its file (a server or a browser started
    for the module, or another module-scoped fixture), directly or through another fixture.

    ``scripts/test`` runs pytest-xdist's ``--dist loadgroup``: such tests stay together in one worker (an
    ``xdist_group`` of the file), which sets the fixture up once; the others go to whichever worker is free."""
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    # The last definition of a name is the one in effect (this file's anyio_backend overrides anyio's module one).
    return any(chain[-1].scope in SHARED_SCOPES for chain in definitions.values() if chain)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _left_out.update(item.nodeid for item in items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)  # set in a pytest-xdist worker only
    if workeroutput is not None:
        workeroutput[_LEFT_OUT] = sorted(_left_out)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist's controller: a worker finished; every worker collects (and deselects) the same tests."""
    _left_out.update(getattr(node, "workeroutput", {}).get(_LEFT_OUT, ()))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say what a ``-m`` expression (``scripts/test --fast``) left out, file by file, so nothing is skipped unsaid."""
    expression = config.option.markexpr
    if not expression or not _left_out:
        return
    files = Counter(nodeid.split("::")[0] for nodeid in _left_out)
    terminalreporter.section(f"left out by -m {expression!r}")
    terminalreporter.write_line(f"{len(_left_out)} tests in {len(files)} files, not run (scripts/test runs them):")
    for path, count in sorted(files.items()):
        terminalreporter.write_line(f"  {path}: {count}")


@pytest.fixture(scope="session", autouse=True)
def temporary_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The temporary directory of the whole run, for this process and every server it starts (they inherit
    ``TMPDIR``), removed at the end: the service copies a local pack under ``<temp>/sudokupool-<uid>/`` before
    mapping it when no cache directory is set, a directory per source, and the suite's sources are its own
    temporary directories, so without this every run would leave a copy of each in the system's /tmp."""
    directory = tmp_path_factory.mktemp("tmpdir")
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = str(directory)
    try:
        yield directory
    finally:
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]
        tempfile.tempdir = saved[1]
        shutil.rmtree(directory, ignore_errors=True)


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
async def client_at(pool: Pool) -> AsyncIterator[Callable[..., httpx.AsyncClient]]:
    """Clients of apps whose clock stands at a given time, over ``pool`` or another: ``client_at(now, over=None)``."""
    clients: list[httpx.AsyncClient] = []

    def make(now: float, over: Pool | None = None) -> httpx.AsyncClient:
        app = create_app(Settings(), pool=over or pool, clock=lambda: now)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
async def client(pool: Pool) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(), pool=pool)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 4321))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client
