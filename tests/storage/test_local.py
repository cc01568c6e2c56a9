from __future__ import annotations

import os
from pathlib import Path

import pytest

from sudokupool.config import Settings
from sudokupool.storage import open_store
from sudokupool.storage.base import StorageError
from sudokupool.storage.local import CHUNK, LocalStore

pytestmark = pytest.mark.anyio


def touch(path: Path, body: bytes = b"x", *, mtime: int = 1_790_000_000) -> Path:
    path.write_bytes(body)
    os.utime(path, (mtime, mtime))
    return path


async def read_all(store: LocalStore, key: str) -> list[bytes]:
    return [chunk async for chunk in store.open(key)]


async def test_directory_lists_only_exports_newest_first_gzip_winning_ties(tmp_path: Path) -> None:
    touch(tmp_path / "pool-20260101T000000Z.ndjson", b"plain")
    touch(tmp_path / "pool-20260101T000000Z.ndjson.gz", b"gzipped!")
    touch(tmp_path / "pool-20260301T120000Z.ndjson")
    touch(tmp_path / "pool-20251231T235959Z.ndjson.gz")
    touch(tmp_path / "README.txt")
    touch(tmp_path / "pool-latest.ndjson.gz")
    touch(tmp_path / "pool-20270101T000000Z.ndjson.gz.part")
    (tmp_path / "pool-20280101T000000Z.ndjson.gz").mkdir()

    listing = await LocalStore(tmp_path).list_exports(limit=10)

    assert [o.key for o in listing.objects] == [
        "pool-20260301T120000Z.ndjson",
        "pool-20260101T000000Z.ndjson.gz",
        "pool-20260101T000000Z.ndjson",
        "pool-20251231T235959Z.ndjson.gz",
    ]
    assert listing.truncated is False
    assert listing.objects[1].size == len(b"gzipped!")
    assert listing.objects[1].uploaded.isoformat() == "2026-09-21T14:13:20+00:00"


@pytest.mark.parametrize(
    ("limit", "keys", "truncated"),
    [
        pytest.param(1, ["pool-20260301T120000Z.ndjson"], True, id="one"),
        pytest.param(2, ["pool-20260301T120000Z.ndjson", "pool-20260101T000000Z.ndjson.gz"], False, id="exactly-all"),
    ],
)
async def test_limit_keeps_the_newest_and_reports_truncation(
    tmp_path: Path, limit: int, keys: list[str], truncated: bool
) -> None:
    touch(tmp_path / "pool-20260101T000000Z.ndjson.gz")
    touch(tmp_path / "pool-20260301T120000Z.ndjson")

    listing = await LocalStore(tmp_path).list_exports(limit=limit)

    assert [o.key for o in listing.objects] == keys
    assert listing.truncated is truncated


async def test_empty_directory_has_no_latest(tmp_path: Path) -> None:
    listing = await LocalStore(tmp_path).list_exports(limit=10)

    assert listing.objects == ()
    assert listing.latest is None


async def test_a_single_file_needs_an_export_name(tmp_path: Path) -> None:
    path = touch(tmp_path / "pool_hard.ndjson.gz", b"abc")
    with pytest.raises(StorageError, match=f"^{path}: not an export name; name it pool-YYYYMMDDTHHMMSSZ"):
        await LocalStore(path).list_exports(limit=10)


async def test_single_file_of_any_name_is_the_only_export_when_any_name_is_allowed(tmp_path: Path) -> None:
    path = touch(tmp_path / "my-export.ndjson.gz", b"abc")
    store = LocalStore(path, any_name=True)

    listing = await store.list_exports(limit=10)

    assert [(o.key, o.size) for o in listing.objects] == [("my-export.ndjson.gz", 3)]
    assert await read_all(store, "my-export.ndjson.gz") == [b"abc"]


async def test_missing_path_raises_storage_error_naming_it(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "nowhere")

    with pytest.raises(StorageError, match="nowhere: no such file or directory"):
        await store.list_exports(limit=10)


async def test_a_path_that_is_no_file_or_directory_is_named_so() -> None:
    with pytest.raises(StorageError, match=r"^/dev/null: not a regular file or directory$"):
        await LocalStore("/dev/null").list_exports(limit=10)


async def test_a_pack_is_not_taken_for_an_export(tmp_path: Path) -> None:
    pack = tmp_path / "pool-20260101T000000Z.pack"
    pack.write_bytes(b"SUDOKUPK")
    with pytest.raises(StorageError, match=f"^{pack} is a pool pack, not an export: point at the export it was made"):
        await LocalStore(pack).list_exports(limit=10)


async def test_open_streams_in_chunks(tmp_path: Path) -> None:
    body = os.urandom(CHUNK * 2 + 123)
    touch(tmp_path / "pool-20260101T000000Z.ndjson.gz", body)

    chunks = await read_all(LocalStore(tmp_path), "pool-20260101T000000Z.ndjson.gz")

    assert [len(c) for c in chunks] == [CHUNK, CHUNK, 123]
    assert b"".join(chunks) == body


async def test_open_missing_file_raises_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=r"pool-20260101T000000Z\.ndjson\.gz"):
        await read_all(LocalStore(tmp_path), "pool-20260101T000000Z.ndjson.gz")


async def test_open_only_reads_inside_the_directory(tmp_path: Path) -> None:
    (tmp_path / "exports").mkdir()
    touch(tmp_path / "secret.ndjson", b"secret")

    with pytest.raises(StorageError):
        await read_all(LocalStore(tmp_path / "exports"), "../secret.ndjson")


def test_the_bundled_demo_pool_is_named_snapshots_and_any_other_source_by_its_path(tmp_path: Path) -> None:
    settings = Settings.from_environ({})
    assert open_store(settings.exports_source, settings).description == "snapshots"
    assert open_store(str(tmp_path), settings).description == str(tmp_path)


MISDATED = ["pool-20261399T000000Z.ndjson", "pool-20260230T000000Z.ndjson.gz", "pool-20261231T246000Z.pack"]


async def test_a_name_with_no_real_time_is_not_an_export_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    touch(tmp_path / "pool-20260101T000000Z.ndjson.gz")
    touch(tmp_path / "pool-20251231T000000Z.ndjson.gz")
    for name in MISDATED:
        touch(tmp_path / name)
    store = LocalStore(tmp_path)
    with caplog.at_level("WARNING"):
        for _ in range(3):
            listing = await store.list_exports(limit=10)
            assert [o.key for o in listing.objects] == [
                "pool-20260101T000000Z.ndjson.gz",
                "pool-20251231T000000Z.ndjson.gz",
            ]
            assert listing.truncated is False
            one = await store.list_exports(limit=1)
            assert [o.key for o in one.objects] == ["pool-20260101T000000Z.ndjson.gz"]
            assert one.truncated is True
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"{tmp_path}: ignoring {name}: its name holds no real UTC time, so it is not an export"
        for name in ("pool-20261399T000000Z.ndjson", "pool-20260230T000000Z.ndjson.gz")
    ]


async def test_a_flood_of_misdated_names_is_logged_up_to_a_bound(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sudokupool.storage.base import Misdated

    monkeypatch.setattr(Misdated, "REMEMBERED", 3)
    for day in range(1, 8):
        touch(tmp_path / f"pool-202613{day:02d}T000000Z.ndjson")
    store = LocalStore(tmp_path)
    with caplog.at_level("WARNING"):
        assert (await store.list_exports(limit=10)).objects == ()
        assert (await store.list_exports(limit=10)).objects == ()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4
    assert lines[-1] == f"{tmp_path}: more misdated names than the 3 logged; no more are logged"


async def test_exports_behind_many_other_pool_names_are_still_found(tmp_path: Path) -> None:
    # Names that sort above every export ("pool-l..." > "pool-2..."), more than a listing's first look takes.
    for n in range(40):
        touch(tmp_path / f"pool-latest-{n}.ndjson.gz")
    (tmp_path / "pool-20260301T000000Z.ndjson.gz").mkdir()
    touch(tmp_path / "pool-20260201T000000Z.ndjson.gz")
    touch(tmp_path / "pool-20260101T000000Z.ndjson")
    listing = await LocalStore(tmp_path).list_exports(limit=1)
    assert [o.key for o in listing.objects] == ["pool-20260201T000000Z.ndjson.gz"]
    assert listing.truncated is True
