"""End to end: the real service (started as the Procfile starts it) over exports in a real SeaweedFS.

Exports are uploaded while the service runs; the storage is killed and started again under it; the
service starts with the storage down, with and without a fallback export.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.factories import write_export
from tests.helpers import free_port, wait_until
from tests.seaweed import SeaweedS3
from tests.servers import Server, command, run_server

OLDEST = "pool-20251201T000000Z.ndjson.gz"
OLD = "pool-20260101T000000Z.ndjson.gz"
NEW = "pool-20260201T000000Z.ndjson.gz"
NEWER = "pool-20260301T000000Z.ndjson.gz"
PREFIX = "exports/"
INTERVAL = 1.0
#: Credentials for an endpoint where nothing listens (no profile files, no instance metadata lookups).
NO_SERVER_AWS = {
    "AWS_ACCESS_KEY_ID": "nobody",
    "AWS_SECRET_ACCESS_KEY": "nothing",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def app_env(server: SeaweedS3 | None, url: str, **extra: str) -> dict[str, str]:
    """The service's environment: exports at ``url``, credentials from the standard AWS variables."""
    endpoint = server.endpoint_url if server is not None else f"http://127.0.0.1:{free_port()}"
    aws = server.environ() if server is not None else NO_SERVER_AWS
    return {
        **aws,
        "SUDOKUPOOL_EXPORTS": url,
        "SUDOKUPOOL_S3_ENDPOINT_URL": endpoint,
        "SUDOKUPOOL_S3_ADDRESSING_STYLE": "path",
        "SUDOKUPOOL_SYNC_INTERVAL": str(INTERVAL),
        # Every pool-exports request reaches the storage, so an outage shows at once.
        "SUDOKUPOOL_EXPORTS_LIST_CACHE_SECONDS": "0",
        "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000",
        "SUDOKUPOOL_STORAGE_RETRY_SECONDS": "1",
        **extra,
    }


def export_bytes(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> bytes:
    return write_export(tmp_path / name, records).read_bytes()


def health(server: Server) -> dict[str, Any]:
    response = httpx.get(f"{server.url}/api/v1/health", timeout=5)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def seen(server: Server, condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition`` (what a client sees) holds; fail with the server's log after 20 s."""
    wait_until(condition, what, seconds=20.0, log=server.output)


def puzzle_status(server: Server, record: dict[str, Any]) -> int:
    return httpx.get(f"{server.url}/api/v2/puzzles/{record['canonical_id']}", timeout=5).status_code


def concurrent_listings(server: Server, n: int) -> tuple[float, list[httpx.Response]]:
    """``n`` concurrent GET pool-exports: the time until the last answer, and the answers."""

    async def run() -> tuple[float, list[httpx.Response]]:
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=n)) as client:
            started = time.perf_counter()
            responses = await asyncio.gather(*(client.get(f"{server.url}/api/v2/pool-exports") for _ in range(n)))
            return time.perf_counter() - started, list(responses)

    return asyncio.run(run())


def assert_listing_refused_quickly(server: Server) -> None:
    """While storage is down, pool-exports answers 503 JSON without waiting for storage: a request waits
    at most 0.4 s for the one storage call in flight, then the failure is remembered (5 s)."""
    for _ in range(2):
        elapsed, responses = concurrent_listings(server, 30)
        for response in responses:
            assert response.status_code == 503
            assert response.headers["content-type"] == "application/json"
            assert int(response.headers["retry-after"]) >= 1
            assert set(response.json()) == {"error"}
        # One storage call shared by all, not 30 in a row (each failed call takes 0.3-2.6 s of retries).
        assert elapsed < 2.0, elapsed


@pytest.mark.slow
def test_lists_serves_and_syncs_exports_from_s3(
    seaweed: SeaweedS3, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    bucket = seaweed.new_bucket()
    seaweed.put(bucket, PREFIX + OLDEST, export_bytes(tmp_path, OLDEST, records[30:32]))
    old = export_bytes(tmp_path, OLD, records[:5])
    seaweed.put(bucket, PREFIX + OLD, old)
    with run_server(app_env(seaweed, f"s3://{bucket}/{PREFIX}"), tmp_path / "server.log") as server:
        listing = httpx.get(f"{server.url}/api/v2/pool-exports", timeout=5)
        assert listing.status_code == 200
        body = listing.json()
        assert body["truncated"] is False
        assert [item["key"] for item in body["objects"]] == [PREFIX + OLD, PREFIX + OLDEST]
        assert body["objects"][0]["size"] == len(old)
        assert body["objects"][0]["uploaded"].endswith("Z")

        assert puzzle_status(server, records[0]) == 200
        loaded = health(server)
        assert loaded["export"]["source"] == f"s3://{bucket}/{PREFIX}"
        assert loaded["export"]["key"] == PREFIX + OLD
        assert loaded["export"]["fallback"] is False

        # A newer export is swapped in while the service runs.
        seaweed.put(bucket, PREFIX + NEW, export_bytes(tmp_path, NEW, records[5:12]))
        seen(server, lambda: health(server)["export"]["key"] == PREFIX + NEW, "the newer export served")
        assert puzzle_status(server, records[6]) == 200
        assert puzzle_status(server, records[0]) == 404
        after = health(server)
        assert after["puzzles"] == 7
        stats = httpx.get(f"{server.url}/api/v2/stats", timeout=5).json()
        assert stats["last_synced_at"] == after["export"]["exported_at"]  # the export's time, not the swap's

        # A corrupt (truncated) newer one is refused; the current pool keeps serving.
        corrupt = export_bytes(tmp_path, NEWER, records[12:20])
        seaweed.put(bucket, PREFIX + NEWER, corrupt[: len(corrupt) // 2])
        seen(server, lambda: NEWER in (health(server)["sync"]["last_error"] or ""), "the corrupt export refused")
        time.sleep(INTERVAL * 3)
        refused = health(server)
        assert refused["export"]["key"] == PREFIX + NEW
        assert "truncated gzip stream" in refused["sync"]["last_error"]
        assert puzzle_status(server, records[6]) == 200
    # Logged once, not at every interval.
    refusals = [line for line in server.output().splitlines() if "refused: cannot load export" in line]
    assert len(refusals) == 1
    assert NEWER in refusals[0]


@pytest.mark.slow
def test_keeps_serving_while_the_storage_is_down(
    seaweed_restartable: SeaweedS3, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    storage = seaweed_restartable
    bucket = storage.new_bucket()
    storage.put(bucket, PREFIX + OLD, export_bytes(tmp_path, OLD, records[:5]))
    with run_server(app_env(storage, f"s3://{bucket}/{PREFIX}"), tmp_path / "server.log") as server:
        assert puzzle_status(server, records[0]) == 200
        storage.stop(kill=True)
        seen(server, lambda: health(server)["sync"]["last_error"] is not None, "the failed sync attempt")
        down = health(server)
        assert down["export"]["key"] == PREFIX + OLD
        assert down["sync"]["last_error"].startswith(f"cannot list exports in s3://{bucket}/{PREFIX}")
        assert puzzle_status(server, records[0]) == 200
        assert httpx.get(f"{server.url}/api/v2/puzzles/random", timeout=5).status_code == 200
        assert_listing_refused_quickly(server)

        # Storage back, with a newer export: sync picks it up.
        storage.start()
        storage.put(bucket, PREFIX + NEW, export_bytes(tmp_path, NEW, records[5:12]))
        seen(server, lambda: health(server)["export"]["key"] == PREFIX + NEW, "the newer export after the outage")
        assert puzzle_status(server, records[6]) == 200
    output = server.output()
    assert "Traceback" not in output
    # The outage is two lines, whoever met it (the sync loop, 30 listing requests): its start and its end.
    assert len([line for line in output.splitlines() if "storage unreachable" in line]) == 1
    assert "pool-exports" not in "".join(line for line in output.splitlines() if line.startswith("WARNING"))
    back = [line for line in output.splitlines() if "storage is reachable again after" in line]
    assert len(back) == 1
    assert re.search(r"; \d+ call\(s\) failed meanwhile$", back[0])


@pytest.mark.slow
def test_starts_on_the_fallback_and_switches_when_storage_comes_back(
    seaweed_restartable: SeaweedS3, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    storage = seaweed_restartable
    bucket = storage.new_bucket()
    storage.put(bucket, PREFIX + NEW, export_bytes(tmp_path, NEW, records[5:12]))
    fallback = tmp_path / "fallback"
    fallback.mkdir()
    write_export(fallback / OLD, records[:5])
    storage.stop()
    env = app_env(storage, f"s3://{bucket}/{PREFIX}", SUDOKUPOOL_FALLBACK_EXPORTS=str(fallback))
    with run_server(env, tmp_path / "server.log") as server:
        started = health(server)
        assert started["export"]["fallback"] is True
        assert started["export"]["key"] == OLD
        assert started["export"]["source"] == str(fallback)
        assert puzzle_status(server, records[0]) == 200
        assert "serving the FALLBACK export" in server.output()

        storage.start()
        seen(server, lambda: health(server)["export"]["fallback"] is False, "the switch to storage")
        assert health(server)["export"]["key"] == PREFIX + NEW
        assert puzzle_status(server, records[6]) == 200


@pytest.mark.slow
@pytest.mark.parametrize(
    ("url", "line"),
    [
        pytest.param(
            "s3://nobody-home/exports/",
            "s of retries); no SUDOKUPOOL_FALLBACK_EXPORTS to serve instead",
            id="storage-down-no-fallback",
        ),
    ],
)
def test_startup_fails_with_one_clear_line(url: str, line: str, tmp_path: Path) -> None:
    env = {**os.environ, **app_env(None, url)}
    result = subprocess.run(command(free_port()), env=env, capture_output=True, text=True, timeout=60, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 3
    assert "Traceback" not in output
    # The reason, once, as the last line (docs/operations.md, The launcher).
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("sudokupool: ") and line in last
    assert output.count(last.removeprefix("sudokupool: ")) == 1


@pytest.mark.slow
def test_a_malformed_s3_url_is_one_line_and_exit_status_2() -> None:
    env = {**os.environ, **app_env(None, "s3:///exports/")}
    result = subprocess.run(command(free_port()), env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "sudokupool: SUDOKUPOOL_EXPORTS='s3:///exports/' has no bucket name; "
        "expected s3://bucket/prefix/, a directory or an export file"
    ]


@pytest.mark.slow
def test_the_listing_answers_503_at_once_when_storage_is_a_closed_port(
    export_dir: Path, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    env = app_env(
        None,
        "s3://nobody-home/exports/",
        SUDOKUPOOL_FALLBACK_EXPORTS=str(export_dir),
        SUDOKUPOOL_STORAGE_RETRY_SECONDS="0",
        SUDOKUPOOL_SYNC_INTERVAL="0",
    )
    with run_server(env, tmp_path / "server.log") as server:
        assert puzzle_status(server, records[0]) == 200
        assert_listing_refused_quickly(server)
    output = server.output()
    assert "Traceback" not in output
    # The FALLBACK line said storage is down at startup; the listing's failures add no line.
    assert [line for line in output.splitlines() if line.startswith("WARNING")] == [
        line for line in output.splitlines() if "serving the FALLBACK export" in line
    ]
