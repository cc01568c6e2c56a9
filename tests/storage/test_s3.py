from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from sudokupool.config import S3Location, Settings, parse_s3_url
from sudokupool.storage import open_store
from sudokupool.storage.base import CHUNK, StorageError
from sudokupool.storage.s3 import S3Store, resolve_region
from tests.helpers import free_port
from tests.seaweed import SeaweedS3

EXPORTS = {
    "pool-20260101T000000Z.ndjson": b"plain",
    "pool-20260101T000000Z.ndjson.gz": b"gzipped!",
    "pool-20260301T120000Z.ndjson": b"newest",
    "pool-20251231T235959Z.ndjson.gz": b"oldest",
}
NEWEST_FIRST = [
    "pool-20260301T120000Z.ndjson",
    "pool-20260101T000000Z.ndjson.gz",
    "pool-20260101T000000Z.ndjson",
    "pool-20251231T235959Z.ndjson.gz",
]
NOT_EXPORTS = [
    "README.txt",
    "pool-20261399T000000Z.ndjson",  # no real time: month 13, 30 February
    "pool-20260230T000000Z.ndjson.gz",
    "pool-latest.ndjson.gz",
    "pool-20270101T000000Z.ndjson.gz.part",
    "a-pool-20270101T000000Z.ndjson.gz",
    "older/pool-20270101T000000Z.ndjson.gz",
]


def settings_for(server: SeaweedS3, **changes: object) -> Settings:
    return Settings(s3_endpoint_url=server.endpoint_url).replace(**changes)


@pytest.fixture
async def store(s3_env: SeaweedS3) -> AsyncIterator[S3Store]:
    bucket = s3_env.new_bucket()
    async with await S3Store.connect(f"s3://{bucket}/exports/", settings_for(s3_env)) as store:
        yield store


def fill(server: SeaweedS3, store: S3Store, names: dict[str, bytes], *, extra: list[str] = NOT_EXPORTS) -> None:
    bucket, prefix = store.location.bucket, store.location.prefix
    for name, body in names.items():
        server.put(bucket, prefix + name, body)
    for name in extra:
        server.put(bucket, prefix + name, b"not an export")
    server.put(bucket, "elsewhere/pool-20290101T000000Z.ndjson.gz", b"other prefix")


async def read_all(store: S3Store, key: str) -> list[bytes]:
    return [chunk async for chunk in store.open(key)]


@pytest.mark.parametrize(
    ("url", "bucket", "prefix"),
    [
        pytest.param("s3://pool/exports/", "pool", "exports/", id="prefix"),
        pytest.param("s3://pool/a/b", "pool", "a/b/", id="prefix-without-slash"),
        pytest.param("s3://pool", "pool", "", id="bucket-only"),
        pytest.param("s3://pool/", "pool", "", id="bucket-slash"),
    ],
)
def test_parse_s3_url(url: str, bucket: str, prefix: str) -> None:
    assert parse_s3_url(url) == S3Location(bucket, prefix)


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("s3:///prefix/", id="no-bucket"),
        pytest.param("https://pool/exports/", id="not-s3"),
        pytest.param("s3://Bad_Bucket!/exports/", id="bucket-name"),
    ],
)
def test_parse_s3_url_rejects(url: str) -> None:
    with pytest.raises(ValueError, match="s3"):
        parse_s3_url(url)


@pytest.mark.parametrize(
    ("setting", "environ", "region"),
    [
        pytest.param("eu-west-3", {"AWS_REGION": "us-west-2"}, "eu-west-3", id="setting-wins"),
        pytest.param("", {"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "ap-south-1"}, "us-west-2", id="aws-region"),
        pytest.param("", {"AWS_DEFAULT_REGION": "ap-south-1"}, "ap-south-1", id="aws-default-region"),
        pytest.param("", {}, "us-east-1", id="default"),
    ],
)
def test_resolve_region(setting: str, environ: dict[str, str], region: str) -> None:
    assert resolve_region(Settings(s3_region=setting), environ) == region


@pytest.mark.anyio
async def test_lists_only_direct_exports_newest_first(seaweed: SeaweedS3, store: S3Store) -> None:
    fill(seaweed, store, EXPORTS)

    listing = await store.list_exports(limit=100)

    assert [o.key for o in listing.objects] == ["exports/" + name for name in NEWEST_FIRST]
    assert listing.truncated is False
    assert [o.size for o in listing.objects] == [len(EXPORTS[name]) for name in NEWEST_FIRST]
    now = datetime.now(UTC)
    for item in listing.objects:
        assert item.uploaded.tzinfo == UTC
        assert now - timedelta(minutes=5) < item.uploaded <= now + timedelta(minutes=5)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("limit", "truncated"),
    [
        pytest.param(1, True, id="one"),
        pytest.param(3, True, id="three"),
        pytest.param(4, False, id="all"),
    ],
)
async def test_limit_keeps_the_newest_and_reports_truncation(
    seaweed: SeaweedS3, store: S3Store, limit: int, truncated: bool
) -> None:
    fill(seaweed, store, EXPORTS)

    listing = await store.list_exports(limit=limit)

    assert [o.key for o in listing.objects] == ["exports/" + name for name in NEWEST_FIRST[:limit]]
    assert listing.truncated is truncated


@pytest.mark.anyio
async def test_listing_follows_pages(seaweed: SeaweedS3, store: S3Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sudokupool.storage.s3.PAGE_SIZE", 2)
    fill(seaweed, store, EXPORTS)

    listing = await store.list_exports(limit=100)

    assert [o.key for o in listing.objects] == ["exports/" + name for name in NEWEST_FIRST]
    assert listing.truncated is False


@pytest.mark.anyio
async def test_listing_stops_at_the_page_cap_and_says_truncated(
    seaweed: SeaweedS3, store: S3Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sudokupool.storage.s3.PAGE_SIZE", 2)
    monkeypatch.setattr("sudokupool.storage.s3.MAX_LIST_PAGES", 1)
    fill(seaweed, store, EXPORTS, extra=[])

    listing = await store.list_exports(limit=100)

    # Keys come in name order, so the cap cuts off the newest: the reason for the documented cap.
    assert [o.key for o in listing.objects] == [
        "exports/pool-20260101T000000Z.ndjson",
        "exports/pool-20251231T235959Z.ndjson.gz",
    ]
    assert listing.truncated is True


@pytest.mark.anyio
async def test_bucket_root_prefix(s3_env: SeaweedS3) -> None:
    bucket = s3_env.new_bucket()
    s3_env.put(bucket, "pool-20260101T000000Z.ndjson.gz", b"root")
    s3_env.put(bucket, "exports/pool-20270101T000000Z.ndjson.gz", b"nested")

    store = open_store(f"s3://{bucket}", settings_for(s3_env))
    try:
        listing = await store.list_exports(limit=10)
        chunks = [chunk async for chunk in store.open("pool-20260101T000000Z.ndjson.gz")]
    finally:
        await store.close()

    assert [o.key for o in listing.objects] == ["pool-20260101T000000Z.ndjson.gz"]
    assert chunks == [b"root"]


@pytest.mark.anyio
async def test_open_streams_a_large_object_in_bounded_chunks(seaweed: SeaweedS3, store: S3Store) -> None:
    body = os.urandom(5 * CHUNK + 4321)
    seaweed.put(store.location.bucket, "exports/pool-20260101T000000Z.ndjson.gz", body)

    chunks = await read_all(store, "exports/pool-20260101T000000Z.ndjson.gz")

    assert len(chunks) >= 6
    assert max(len(c) for c in chunks) <= CHUNK
    assert b"".join(chunks) == body


@pytest.mark.anyio
async def test_a_consumer_may_stop_early_and_the_client_keeps_working(seaweed: SeaweedS3, store: S3Store) -> None:
    body = os.urandom(4 * CHUNK)
    key = "exports/pool-20260101T000000Z.ndjson.gz"
    seaweed.put(store.location.bucket, key, body)

    stream = store.open(key)
    first = await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]

    assert body.startswith(first)
    assert b"".join(await read_all(store, key)) == body


@pytest.mark.anyio
async def test_missing_key_raises_storage_error_naming_bucket_and_key(store: S3Store) -> None:
    where = f"s3://{store.location.bucket}/exports/pool-20260101T000000Z.ndjson.gz"

    with pytest.raises(StorageError, match=f"{where}: NoSuchKey"):
        await read_all(store, "exports/pool-20260101T000000Z.ndjson.gz")


@pytest.mark.anyio
async def test_missing_bucket_raises_storage_error(s3_env: SeaweedS3) -> None:
    async with await S3Store.connect("s3://no-such-bucket-here/x/", settings_for(s3_env)) as store:
        with pytest.raises(StorageError, match=r"s3://no-such-bucket-here/x/: NoSuchBucket") as caught:
            await store.list_exports(limit=10)
    assert caught.value.permanent


@pytest.mark.anyio
async def test_wrong_credentials_raise_storage_error(s3_env: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> None:
    bucket = s3_env.new_bucket()
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")

    async with await S3Store.connect(f"s3://{bucket}/", settings_for(s3_env)) as store:
        with pytest.raises(StorageError, match=f"s3://{bucket}/: SignatureDoesNotMatch") as caught:
            await store.list_exports(limit=10)
    assert caught.value.permanent


@pytest.mark.anyio
async def test_unreachable_endpoint_raises_storage_error(s3_env: SeaweedS3) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"

    async with await S3Store.connect("s3://pool/exports/", Settings(s3_endpoint_url=nowhere)) as store:
        with pytest.raises(StorageError, match=r"s3://pool/exports/: Could not connect") as caught:
            await store.list_exports(limit=10)
        assert not caught.value.permanent
        with pytest.raises(StorageError, match=r"s3://pool/exports/pool-20260101T000000Z.ndjson: Could not connect"):
            await read_all(store, "exports/pool-20260101T000000Z.ndjson")


@pytest.mark.anyio
async def test_storage_killed_mid_stream_raises_storage_error(
    seaweed_restartable: SeaweedS3, s3_env: SeaweedS3
) -> None:
    server = seaweed_restartable
    bucket = server.new_bucket()
    key = "pool-20260101T000000Z.ndjson.gz"
    server.put(bucket, key, os.urandom(48 * CHUNK))

    async with await S3Store.connect(f"s3://{bucket}/", settings_for(server)) as store:
        stream = store.open(key)
        await anext(stream)
        server.stop(kill=True)
        with pytest.raises(StorageError, match=f"s3://{bucket}/{key}: "):
            async for _ in stream:
                pass
