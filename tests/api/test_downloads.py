"""``/api/v2/pool-exports/{name}``: exports downloaded from a local directory and from a real SeaweedFS, their
checksums matching the listing's, and hostile names refused."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from sudokupool.config import Settings, parse_s3_url
from sudokupool.exporting.publish import publish
from tests.factories import write_export
from tests.seaweed import SeaweedS3
from tests.servers import run_server
from tests.storage.test_app_s3 import app_env

EXPORT = "pool-20261122T100000Z.ndjson.gz"
HOSTILE = [
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "..%2Fpool-20261122T100000Z.ndjson.gz",
    "sub%2Fpool-20261122T100000Z.ndjson.gz",
    "%2e%2e",
    "pool-20261122T100000Z.pack",
    "pool-20261122T100000Z.ndjson",
    "pool-20261399T100000Z.ndjson.gz",
    "pool-20261122T100000Z.ndjson.gz%00",
    "anything",
    "%2Fetc%2Fpasswd",
]


def listed(url: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{url}/api/v2/pool-exports").json()
    return body


def refused(url: str) -> None:
    for name in HOSTILE:
        response = httpx.get(f"{url}/api/v2/pool-exports/{name}")
        assert response.status_code == 404, name
        assert response.json()["error"] in (
            "not found",
            "no export has that name: the names are listed at /api/v2/pool-exports",
        )


@pytest.mark.slow
def test_a_local_export_is_streamed_with_its_checksum(
    export_dir: Path, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    # A pack beside the export and a file outside the directory: neither is served.
    (export_dir.parent / "secret.txt").write_text("not an export")
    data = (export_dir / EXPORT).read_bytes()
    env = {"SUDOKUPOOL_EXPORTS": str(export_dir), "SUDOKUPOOL_EXPORT_LICENSE": "CC0-1.0"}
    with run_server(env, tmp_path / "server.log") as server:
        listing = listed(server.url)
        assert listing["license"] == "CC0-1.0"
        (item,) = listing["objects"]
        assert (item["key"], item["size"]) == (EXPORT, len(data))
        assert item["sha256"] == hashlib.sha256(data).hexdigest()
        response = httpx.get(server.url + item["url"])
        assert response.status_code == 200
        assert response.headers["content-length"] == str(len(data))
        assert response.headers["content-type"] == "application/gzip"
        assert response.headers["x-checksum-sha256"] == item["sha256"]
        digest = base64.b64encode(hashlib.sha256(response.content).digest()).decode()
        assert response.headers["repr-digest"] == f"sha-256=:{digest}:"
        assert response.content == data
        head = httpx.head(server.url + item["url"])
        assert (head.status_code, head.headers["content-length"], head.content) == (200, str(len(data)), b"")
        refused(server.url)
        assert httpx.get(f"{server.url}/api/v1/pool-exports/{EXPORT}").status_code == 200
        assert httpx.get(f"{server.url}/api/pool-exports/{EXPORT}").status_code == 404


@pytest.mark.slow
def test_an_s3_export_redirects_to_a_presigned_url_with_its_checksum(
    s3_env: SeaweedS3, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    seaweed = s3_env
    bucket = seaweed.new_bucket()
    path = write_export(tmp_path / "export.ndjson.gz", records[:8])
    settings = Settings(s3_endpoint_url=seaweed.endpoint_url, s3_addressing_style="path")
    when = datetime(2026, 11, 22, 10, tzinfo=UTC)
    key = asyncio.run(publish(path, parse_s3_url(f"s3://{bucket}/exports/"), settings, now=when, with_pack=False))
    name = key.rsplit("/", 1)[-1]
    data = path.read_bytes()
    env = app_env(seaweed, f"s3://{bucket}/exports/", SUDOKUPOOL_EXPORT_URL_SECONDS="600")
    with run_server(env, tmp_path / "server.log") as server:
        (item,) = listed(server.url)["objects"]
        assert (item["key"], item["url"]) == (key, f"/api/v2/pool-exports/{name}")
        assert item["sha256"] == hashlib.sha256(data).hexdigest()
        response = httpx.get(server.url + item["url"])
        assert response.status_code == 302
        assert response.headers["x-checksum-sha256"] == item["sha256"]
        location = response.headers["location"]
        assert location.startswith(seaweed.endpoint_url) and "X-Amz-Expires=600" in location
        fetched = httpx.get(location)
        assert fetched.status_code == 200
        assert fetched.headers["content-length"] == str(len(data))
        assert hashlib.sha256(fetched.content).hexdigest() == item["sha256"]
        refused(server.url)
