"""Packs in object storage (a real SeaweedFS): listed beside their export, streamed to disk, mapped."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sudokupool.commands.pack import write_pack
from sudokupool.config import Settings
from sudokupool.loader import load_export
from sudokupool.runtime import listing_json
from sudokupool.storage.base import pack_key
from sudokupool.storage.s3 import S3Store
from tests.factories import write_export
from tests.seaweed import SeaweedS3

pytestmark = pytest.mark.anyio

EXPORT = "pool-20260101T000000Z.ndjson.gz"


@pytest.fixture
async def store(s3_env: SeaweedS3) -> AsyncIterator[S3Store]:
    bucket = s3_env.new_bucket()
    settings = Settings(s3_endpoint_url=s3_env.endpoint_url)
    async with await S3Store.connect(f"s3://{bucket}/exports/", settings) as store:
        yield store


async def upload(server: SeaweedS3, store: S3Store, directory: Path, records: list[dict[str, Any]]) -> bytes:
    """An export of ``records`` and its pack, uploaded under the store's prefix; the pack's bytes."""
    write_export(directory / EXPORT, records)
    packed, _ = await write_pack(directory / EXPORT)
    prefix = store.location.prefix
    server.put(store.location.bucket, prefix + packed.name, packed.read_bytes())
    server.put(store.location.bucket, prefix + EXPORT, (directory / EXPORT).read_bytes())
    return packed.read_bytes()


async def test_a_pack_in_object_storage_is_streamed_to_the_cache_and_mapped(
    s3_env: SeaweedS3, store: S3Store, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    data = await upload(s3_env, store, tmp_path, records)
    listing = await store.list_exports(10)
    assert [item["key"] for item in listing_json(listing)["objects"]] == [f"exports/{EXPORT}"]
    export = listing.objects[0]
    assert export.pack is not None and export.pack.key == f"exports/{pack_key(EXPORT)}"
    cache = tmp_path / "cache"
    pool, report = await load_export(store, export, cache_dir=cache)
    assert report.packed and len(pool) == len(records)
    assert (cache / pack_key(EXPORT)).read_bytes() == data
    assert pool.find(records[3]["canonical_id"]) == 3
    # Without a cache directory, into a temporary file.
    pool, report = await load_export(store, export)
    assert report.packed and len(pool) == len(records)


async def test_a_damaged_pack_in_object_storage_is_refused_and_the_export_parsed(
    s3_env: SeaweedS3, store: S3Store, tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    data = bytearray(await upload(s3_env, store, tmp_path, records))
    data[len(data) // 2] ^= 1
    s3_env.put(store.location.bucket, f"exports/{pack_key(EXPORT)}", bytes(data))
    export = (await store.list_exports(1)).objects[0]
    cache = tmp_path / "cache"
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool, report = await load_export(store, export, cache_dir=cache)
    assert not report.packed and len(pool) == len(records)
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"refused pack {store.description}{pack_key(EXPORT)}: checksum mismatch")
    # The parse left a good pack in the cache for the next load.
    _, report = await load_export(store, export, cache_dir=cache)
    assert report.packed
