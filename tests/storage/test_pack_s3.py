"""Packs in object storage (a real SeaweedFS): listed beside their export, streamed to disk, mapped."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sudokupool.config import Settings
from sudokupool.loading import cache as pack_cache
from sudokupool.loading.loader import load_export, parse_export
from sudokupool.loading.packing import write_pack
from sudokupool.state import listing_json
from sudokupool.storage.base import StorageError
from sudokupool.storage.naming import pack_key
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


class RecordingStore(S3Store):
    """The S3 store, recording each range it is asked for; ``fail_at`` makes the read of that part of a
    pack fail after its first chunk, as a connection dropped mid-download does."""

    def __init__(self, store: S3Store, fail_at: int | None = None) -> None:
        super().__init__(store.location, store._settings)
        self.ranges: list[tuple[int, int | None]] = []
        self.fail_at = fail_at

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncGenerator[bytes, None]:
        self.ranges.append((start, end))
        async for chunk in super().open(key, start, end):
            yield chunk
            if start == self.fail_at and key.endswith(".pack"):
                raise StorageError(f"{key}: read failed (Connection reset)")


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> int:
    """Parts of 8 KiB, three at a time, so a test pack is downloaded in many ranges."""
    monkeypatch.setattr(pack_cache, "PART_SIZE", 8 << 10)
    monkeypatch.setattr(pack_cache, "PARALLEL", 3)
    return 8 << 10


async def test_a_pack_is_downloaded_in_parallel_ranges_written_in_place(
    s3_env: SeaweedS3, store: S3Store, tmp_path: Path, records: list[dict[str, Any]], small_parts: int
) -> None:
    data = await upload(s3_env, store, tmp_path, records)
    async with RecordingStore(store) as ranged:
        export = (await ranged.list_exports(1)).objects[0]
        cache = tmp_path / "cache"
        pool, report = await load_export(ranged, export, cache_dir=cache, loaded_at=1)
    assert report.packed and len(pool) == len(records)
    assert (cache / pack_key(EXPORT)).read_bytes() == data
    parts = sorted(ranged.ranges)
    assert len(parts) == -(-len(data) // small_parts) > 3
    assert parts == [(start, min(start + small_parts, len(data))) for start in range(0, len(data), small_parts)]
    assert pool.body(5) == (await parse_export(store, export, loaded_at=1))[0].body(5)


@pytest.mark.parametrize("failure", ["dropped", "replaced-by-a-shorter-pack"])
async def test_a_download_that_fails_midway_is_refused_and_the_export_parsed(
    s3_env: SeaweedS3,
    store: S3Store,
    tmp_path: Path,
    records: list[dict[str, Any]],
    small_parts: int,
    caplog: pytest.LogCaptureFixture,
    failure: str,
) -> None:
    data = await upload(s3_env, store, tmp_path, records)
    async with RecordingStore(store, fail_at=2 * small_parts if failure == "dropped" else None) as ranged:
        export = (await ranged.list_exports(1)).objects[0]
        if failure != "dropped":
            # Listed at its full size, then replaced: the last ranges ask for bytes it no longer has.
            s3_env.put(store.location.bucket, f"exports/{pack_key(EXPORT)}", data[: len(data) // 2])
        cache = tmp_path / "cache"
        with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
            pool, report = await load_export(ranged, export, cache_dir=cache)
    assert not report.packed and len(pool) == len(records)
    [line] = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"cannot read pack {store.description}{pack_key(EXPORT)}: ")
    assert line.endswith("; loading the export instead")
    # The partial download is gone; what the cache holds is the pack the parse made, whole.
    assert sorted(p.name for p in cache.iterdir()) == [f".{pack_key(EXPORT)}.lock", pack_key(EXPORT)]
    _, report = await load_export(store, export, cache_dir=cache)
    assert report.packed
