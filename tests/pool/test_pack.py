"""The pool pack: written beside an export, mapped instead of parsing it, refused when damaged or mismatched."""

from __future__ import annotations

import asyncio
import fcntl
import gc
import logging
import os
import random
import shutil
import struct
import tempfile
import weakref
from array import array
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from sudokupool.app import create_app
from sudokupool.cli import main
from sudokupool.config import Settings
from sudokupool.loading.loader import LoadError, LoadLimits, LoadReport, load_export, load_latest, parse_export
from sudokupool.loading.packing import write_pack
from sudokupool.pool import pack
from sudokupool.pool import pool as pool_module
from sudokupool.pool.export import parse_record, record_line
from sudokupool.pool.pool import Pool, PoolBuilder
from sudokupool.state import listing_json
from sudokupool.storage.base import ExportObject
from sudokupool.storage.local import LocalStore
from sudokupool.storage.naming import pack_key
from sudokupool.sudoku import DIFFICULTIES
from tests import hostile_packs
from tests.factories import build_pool, write_export
from tests.helpers import wait_until_async

pytestmark = pytest.mark.anyio

EXPORT = "pool-20260101T000000Z.ndjson.gz"
OTHER = "pool-20260201T000000Z.ndjson.gz"


async def newest(directory: Path) -> ExportObject:
    export = (await LocalStore(directory).list_exports(1)).latest
    assert export is not None
    return export


async def packed(directory: Path, records: list[dict[str, Any]], name: str = EXPORT) -> Path:
    """An export of ``records`` in ``directory`` with its pack beside it; the pack's path."""
    write_export(directory / name, records)
    path, report = await write_pack(directory / name)
    assert report.loaded == len(records)
    return path


async def load(directory: Path, **options: Any) -> tuple[Pool, LoadReport]:
    return await load_export(LocalStore(directory), await newest(directory), loaded_at=77, **options)


def same_pool(one: Pool, two: Pool) -> None:
    assert len(one) == len(two)
    for i in range(len(one)):
        assert one.body(i) == two.body(i)
        assert one.solution_body(i) == two.solution_body(i)
        assert one.etag(i) == two.etag(i)
        assert one.etag(i, solution=True) == two.etag(i, solution=True)
        assert one.puzzle(i) == two.puzzle(i)
        assert one.solution(i) == two.solution(i)
    assert one.stats_body == two.stats_body
    assert {d: one.count(d) for d in DIFFICULTIES} == {d: two.count(d) for d in DIFFICULTIES}


def flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))


async def test_a_pack_serves_what_parsing_the_export_serves(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    path = await packed(tmp_path, records)
    assert path.name == "pool-20260101T000000Z.pack"
    mapped, report = await load(tmp_path)
    assert report.packed
    assert "from its pack" in report.summary()
    parsed, parsed_report = await parse_export(LocalStore(tmp_path), await newest(tmp_path), loaded_at=77)
    assert not parsed_report.packed
    same_pool(mapped, parsed)
    for i, record in enumerate(records):
        assert mapped.find(record["canonical_id"]) == i
        assert mapped.find(record["canonical_id"].lower()) == i
    assert mapped.find("0000000000000") is None
    assert mapped.find("not an id") is None
    assert mapped.find("  " + records[0]["canonical_id"][2:]) is None  # int() would read this one
    assert mapped.info.loaded_at == 77


async def test_every_instance_serves_the_exports_time_from_one_pack(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    await packed(tmp_path, records)
    export = await newest(tmp_path)
    exported = int(export.timestamp.timestamp())
    first, _ = await load_export(LocalStore(tmp_path), export, loaded_at=1)
    second, _ = await load_export(LocalStore(tmp_path), export, loaded_at=2)
    # An instance that parses the export (no pack) answers alike too.
    parsed, _ = await parse_export(LocalStore(tmp_path), export, loaded_at=3)
    assert (first.info.loaded_at, second.info.loaded_at, parsed.info.loaded_at) == (1, 2, 3)
    for pool in (first, second, parsed):
        assert pool.body(0).endswith(b',"synced_at":%d}' % exported)
        assert pool.gzip_body(0) == first.gzip_body(0)
        assert pool.etag(0) == first.etag(0)
        assert pool.etag(0, solution=True) == first.etag(0, solution=True)
        assert pool.stats_body == first.stats_body


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(lambda size: 3, id="magic"),
        pytest.param(lambda size: 12, id="header-field"),
        pytest.param(lambda size: pack.HEADER_SIZE + 100, id="a-body"),
        pytest.param(lambda size: size - 1, id="last-byte"),
    ],
)
async def test_a_damaged_pack_is_refused_with_one_line_and_the_export_is_parsed(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture, where: Any
) -> None:
    path = await packed(tmp_path, records)
    flip(path, where(path.stat().st_size))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool, report = await load(tmp_path)
    assert not report.packed
    assert len(pool) == report.loaded == len(records)
    refusals = [r.getMessage() for r in caplog.records]
    assert len(refusals) == 1
    assert refusals[0].startswith(f"refused pack {path}: ")
    assert refusals[0].endswith("; loading the export instead")


async def test_a_truncated_pack_is_refused(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    path = await packed(tmp_path, records)
    whole = path.read_bytes()
    path.write_bytes(whole[:-64])
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        _, report = await load(tmp_path)
    assert not report.packed
    assert f"refused pack {path}: truncated: {len(whole) - 64} bytes, but section " in caplog.text


async def test_a_pack_of_another_version_is_refused(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    path = await packed(tmp_path, records)
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 8, pack.VERSION + 1)
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        _, report = await load(tmp_path)
    assert not report.packed
    assert f"pack format version {pack.VERSION + 1}" in caplog.text


async def test_a_pack_made_from_another_export_is_refused(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    made = await packed(other, records[:5], OTHER)
    write_export(tmp_path / OTHER, records[:6])
    # The pack of another export of the same name (another size), then of another name.
    shutil.copy(made, tmp_path / pack_key(OTHER))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool, report = await load(tmp_path)
    assert not report.packed and len(pool) == 6
    assert "made from an export of" in caplog.text
    caplog.clear()
    (other / OTHER).rename(other / EXPORT)
    await write_pack(other / EXPORT)
    shutil.copy(other / pack_key(EXPORT), tmp_path / pack_key(OTHER))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        _, report = await load(tmp_path)
    assert not report.packed
    assert f"made from {EXPORT}, not {OTHER}" in caplog.text


async def test_a_pack_without_its_export_is_neither_listed_nor_loaded(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    await packed(tmp_path, records[:5], OTHER)
    (tmp_path / OTHER).unlink()
    write_export(tmp_path / EXPORT, records[:3])
    listing = await LocalStore(tmp_path).list_exports(10)
    assert [item["key"] for item in listing_json(listing)["objects"]] == [EXPORT]
    assert listing.objects[0].pack is None
    pool, report = await load_latest(LocalStore(tmp_path))
    assert len(pool) == 3 and not report.packed


async def test_the_cache_dir_keeps_a_pack_for_the_next_load(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    exports, cache = tmp_path / "exports", tmp_path / "cache"
    exports.mkdir()
    write_export(exports / EXPORT, records)
    first, report = await load(exports, cache_dir=cache)
    assert not report.packed
    assert sorted(p.name for p in cache.iterdir()) == [f".{pack_key(EXPORT)}.lock", pack_key(EXPORT)]
    second, report = await load(exports, cache_dir=cache)
    assert report.packed
    same_pool(first, second)


async def test_a_whole_copy_in_the_cache_dir_is_mapped_without_waiting_for_its_lock(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    # The lock is held only while a copy is made: the workers of one machine check their mappings of
    # one copy side by side, not one after another.
    exports, cache = tmp_path / "exports", tmp_path / "cache"
    exports.mkdir()
    write_export(exports / EXPORT, records)
    first, _ = await load(exports, cache_dir=cache)
    with (cache / f".{pack_key(EXPORT)}.lock").open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another worker making a copy would hold it
        second, report = await asyncio.wait_for(load(exports, cache_dir=cache), timeout=60)
    assert report.packed
    same_pool(first, second)


async def test_the_cache_dir_drops_a_partial_pack_nobody_is_writing(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    exports, cache = tmp_path / "exports", tmp_path / "cache"
    exports.mkdir()
    cache.mkdir()
    write_export(exports / EXPORT, records[:4])
    left = cache / ".pool-20251231T000000Z.pack.k1lled00"  # a download whose process was killed
    left.write_bytes(bytes(4096))
    writing = cache / ".pool-20260102T000000Z.pack.w0rking0"  # one another worker is writing now
    writing.write_bytes(bytes(4096))
    with (cache / ".pool-20260102T000000Z.pack.lock").open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        pool, _ = await load(exports, cache_dir=cache)
    assert len(pool) == 4
    assert not left.exists()
    assert writing.exists()


async def test_the_cache_dir_keeps_only_the_newest_packs(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    exports, cache = tmp_path / "exports", tmp_path / "cache"
    exports.mkdir()
    cache.mkdir()
    write_export(exports / EXPORT, records[:4])
    older = [f"pool-2025010{n}T000000Z.pack" for n in range(1, 6)]
    for name in [*older, "pool-20270101T000000Z.pack"]:  # one newer than the export loaded
        (cache / name).write_bytes(b"old pack")
        (cache / f".{name}.lock").touch()
        (cache / f".{name}.checked").touch()
    (cache / "notes.txt").write_text("not a pack")
    pool, _ = await load(exports, cache_dir=cache)
    assert len(pool) == 4
    kept = ["pool-20270101T000000Z.pack", pack_key(EXPORT), "pool-20250105T000000Z.pack"]
    # The export's own pack was made by parsing it: no check of a copy to record.
    beside = [f".{name}.lock" for name in kept] + [f".{name}.checked" for name in kept if name != pack_key(EXPORT)]
    assert sorted(p.name for p in cache.iterdir()) == sorted([*kept, *beside, "notes.txt"])


async def packed_source(tmp_path: Path, records: list[dict[str, Any]]) -> tuple[Path, Path]:
    """A directory of exports holding ``records`` with its pack, and a cache directory for its copies."""
    exports = tmp_path / "exports"
    exports.mkdir()
    await packed(exports, records)
    return exports, tmp_path / "cache"


def count_validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The record counts of the packs validated from now on (``validate.validate``, as the pool calls it)."""
    counted: list[int] = []
    validate = pool_module.validate

    def counting(data: memoryview, header: pack.PackHeader, **options: Any) -> int:
        counted.append(header.count)
        return validate(data, header, **options)

    monkeypatch.setattr(pool_module, "validate", counting)
    return counted


async def test_a_copy_checked_once_is_not_checked_again_while_it_is_the_same_file(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    exports, cache = await packed_source(tmp_path, records)
    validated = count_validations(monkeypatch)
    first, _ = await load(exports, cache_dir=cache)
    assert validated == [len(records)]
    assert not first.all_verified
    first.record_verified()  # not every body checked yet: nothing to record about them
    again, _ = await load(exports, cache_dir=cache)
    assert validated == [len(records)]
    assert not again.all_verified
    assert first.verify() is None
    first.record_verified()
    third, report = await load(exports, cache_dir=cache)
    assert report.packed
    assert validated == [len(records)]
    assert third.all_verified  # its bodies were all checked by the first load
    same_pool(first, third)
    assert third.find("0000000000000") is None


async def test_a_checked_copy_written_since_is_checked_again(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The record of a check is of one file: a write in place sets its change time, which nobody can set back.
    exports, cache = await packed_source(tmp_path, records)
    first, _ = await load(exports, cache_dir=cache)
    assert first.verify() is None
    first.record_verified()
    copy = cache / pack_key(EXPORT)
    before = copy.stat()
    hostile_packs.craft(copy, "full-id-table")
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = copy.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    validated = count_validations(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool, report = await asyncio.wait_for(load(exports, cache_dir=cache), timeout=60)
    # The altered copy, checked and refused; then a new copy of the export's pack, checked.
    assert validated == [len(records), len(records)]
    assert f"refused pack {copy}: section table: no free slot" in caplog.text
    assert report.packed
    assert pool.find("0000000000000") is None
    same_pool(first, pool)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda record: record.write_bytes(b"{not json"), id="garbage"),
        pytest.param(
            lambda record: record.write_bytes(orjson.dumps({**orjson.loads(record.read_bytes()), "checks": "0" * 16})),
            id="another-versions-checks",
        ),
        pytest.param(
            lambda record: record.write_bytes(orjson.dumps({**orjson.loads(record.read_bytes()), "probes": 0})),
            id="no-probes",
        ),
        pytest.param(lambda record: record.parent.chmod(0o777), id="a-directory-others-may-write"),
    ],
)
async def test_a_record_of_checks_is_believed_only_as_written_in_a_directory_of_the_service_users(
    tmp_path: Path,
    records: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[Path], object],
) -> None:
    exports, cache = await packed_source(tmp_path, records)
    await load(exports, cache_dir=cache)
    change(cache / f".{pack_key(EXPORT)}.checked")
    validated = count_validations(monkeypatch)
    pool, report = await load(exports, cache_dir=cache)
    assert report.packed and len(pool) == len(records)
    assert validated == [len(records)]


async def test_a_limit_on_records_other_than_the_checks_recorded_checks_again(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    exports, cache = await packed_source(tmp_path, records)
    await load(exports, cache_dir=cache)
    validated = count_validations(monkeypatch)
    await load(exports, cache_dir=cache, limits=LoadLimits(max_record_bytes=Settings.max_record_bytes // 2))
    assert validated == [len(records)]


async def test_the_service_records_that_every_body_was_checked_for_its_next_start(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    exports, cache = await packed_source(tmp_path, records)
    settings = Settings(exports=str(exports), cache_dir=str(cache), sync_interval=0)
    record = cache / f".{pack_key(EXPORT)}.checked"
    app = create_app(settings)
    await app.startup()
    try:
        await wait_until_async(lambda: record.is_file() and orjson.loads(record.read_bytes())["bodies"], seconds=60)
    finally:
        await app.shutdown()
    app = create_app(settings)
    await app.startup()
    try:
        assert app.runtime.current().all_verified
        assert app.sync._verifying is None  # nothing left to check in the background
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            answer = await client.get(f"/api/v2/puzzles/{records[3]['canonical_id']}")
        assert answer.status_code == 200 and answer.json()["canonical_id"] == records[3]["canonical_id"]
    finally:
        await app.shutdown()


async def test_a_damaged_pack_in_the_cache_is_replaced(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    exports, cache = tmp_path / "exports", tmp_path / "cache"
    exports.mkdir()
    write_export(exports / EXPORT, records)
    await load(exports, cache_dir=cache)
    flip(cache / pack_key(EXPORT), pack.HEADER_SIZE + 10)
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        _, report = await load(exports, cache_dir=cache)
    assert not report.packed
    assert f"refused pack {cache / pack_key(EXPORT)}: checksum mismatch" in caplog.text
    _, report = await load(exports, cache_dir=cache)
    assert report.packed


def test_the_pack_command_writes_a_pack_that_check_accepts(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_export(tmp_path / EXPORT, records[:6])
    assert main(["pack", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / pack_key(EXPORT)}" in out
    assert main(["check", str(path)]) == 0
    assert f"pack {pack_key(EXPORT)}: matches the export (6 puzzles)" in capsys.readouterr().out
    flip(tmp_path / pack_key(EXPORT), pack.HEADER_SIZE + 10)
    assert main(["check", str(path)]) == 1
    assert f"pack {pack_key(EXPORT)}: checksum mismatch" in capsys.readouterr().out


def test_check_on_a_directory_reports_the_newest_exports_pack(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    write_export(tmp_path / EXPORT, records[:6])
    assert main(["pack", str(tmp_path / EXPORT)]) == 0
    flip(tmp_path / pack_key(EXPORT), pack.HEADER_SIZE + 10)
    capsys.readouterr()
    assert main(["check", str(tmp_path)]) == 1
    assert f"pack {pack_key(EXPORT)}: checksum mismatch" in capsys.readouterr().out


def test_pack_takes_a_directory_as_check_does(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    older, newer = "pool-20250101T000000Z.ndjson.gz", EXPORT
    write_export(tmp_path / older, records[:3])
    write_export(tmp_path / newer, records[:6])
    assert main(["pack", str(tmp_path)]) == 0
    assert f"wrote {tmp_path / pack_key(newer)}" in capsys.readouterr().out
    assert not (tmp_path / pack_key(older)).exists()
    assert main(["check", str(tmp_path)]) == 0
    assert f"pack {pack_key(newer)}: matches the export (6 puzzles)" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["pack", str(empty)]) == 1
    assert capsys.readouterr().err == (
        f"sudokupool pack: {empty}: no export in it (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz])\n"
    )


def test_check_on_a_pack_says_to_check_its_export(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    write_export(tmp_path / EXPORT, records[:6])
    assert main(["pack", str(tmp_path / EXPORT)]) == 0
    capsys.readouterr()
    assert main(["check", str(tmp_path / pack_key(EXPORT))]) == 1
    out, err = capsys.readouterr()
    assert err == (
        f"sudokupool check: {tmp_path / pack_key(EXPORT)} is a pool pack, not an export: check the export it was "
        "made from (pool-<timestamp>.ndjson[.gz]), and the pack beside it is checked against it\n"
    )
    assert out == ""


async def _serves(path: Path) -> bool:
    """Whether the service started over the export file ``path`` (as ``SUDOKUPOOL_EXPORTS``) serves it."""
    app = create_app(Settings(exports=str(path), sync_interval=0))
    try:
        await app.startup()
    except LoadError as exc:
        assert "not an export name" in str(exc)
        return False
    await app.shutdown()
    return True


@pytest.mark.parametrize(
    ("name", "export"),
    [
        pytest.param(EXPORT, True, id="export-gzip"),
        pytest.param("pool-20260101T000000Z.ndjson", True, id="export-plain"),
        pytest.param("pool_hard.ndjson.gz", False, id="underscore"),
        pytest.param("notes.ndjson", False, id="other-name"),
    ],
)
def test_serve_and_pack_take_the_same_names_and_check_says_which(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], name: str, export: bool
) -> None:
    path = write_export(tmp_path / name, records[:2])
    served = asyncio.run(_serves(path))
    packed = main(["pack", str(path)]) == 0
    capsys.readouterr()
    checked = main(["check", str(path)])
    out = capsys.readouterr().out
    assert (served, packed) == (export, export)
    # check reads the records of a file of any name (publish names the upload), and says when the
    # service would not take the file as it is named.
    assert checked == 0
    assert ("is not an export name" in out) is not export


def test_the_pack_command_refuses_a_file_that_is_not_an_export(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_export(tmp_path / "notes.ndjson", records[:2])
    assert main(["pack", str(path)]) == 1
    assert "not an export name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        pytest.param(lambda path: None, "no such file or directory", id="missing"),
        pytest.param(
            lambda path: path.mkdir(), "no export in it (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz])", id="a-directory"
        ),
    ],
)
def test_the_pack_command_needs_an_export_file(
    tmp_path: Path, make: Any, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pool-20260101T000000Z.ndjson"
    make(path)
    assert main(["pack", str(path)]) == 1
    assert capsys.readouterr().err == f"sudokupool pack: {path}: {problem}\n"
    assert not path.with_name("pool-20260101T000000Z.pack").exists()


def test_the_pack_command_says_at_once_when_the_pack_cannot_be_written(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:2])

    def read_only(**_: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("sudokupool.loading.packing.tempfile.TemporaryFile", read_only)
    assert main(["pack", str(path)]) == 1
    out = capsys.readouterr()
    assert out.err == f"sudokupool pack: cannot write {tmp_path}/pool-20260101T000000Z.pack: Read-only file system\n"
    assert out.out == ""


async def test_a_live_swap_to_a_newer_pack_keeps_every_request_served_and_releases_the_old_mapping(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    exports, staging = tmp_path / "exports", tmp_path / "staging"
    exports.mkdir()
    staging.mkdir()
    await packed(exports, records[:20])
    app = create_app(Settings(exports=str(exports), sync_interval=0.1))
    await app.startup()
    try:
        old = app.runtime.current()
        assert old.info.export_key == EXPORT and len(old) == 20
        released = weakref.ref(old)
        mapping = weakref.ref(old._data)
        del old
        transport = httpx.ASGITransport(app=app)
        statuses: list[int] = []
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver/api/v1") as client:
            running = True

            async def hammer() -> None:
                n = 0
                while running:
                    # Ids in both exports, so every request must succeed before, during and after the swap.
                    for path in (f"/puzzles/{records[5 + n % 10]['canonical_id']}", "/puzzles/random", "/stats"):
                        statuses.append((await client.get(path)).status_code)
                    n += 1
                    await asyncio.sleep(0)  # requests through ASGITransport never wait on a socket

            task = asyncio.create_task(hammer())
            # The pack goes in first, then its export, as publish uploads them.
            path = await packed(staging, records[5:40], OTHER)
            path.rename(exports / path.name)
            (staging / OTHER).rename(exports / OTHER)
            # Polling is the point: the swap is what requests see, there is no event to wait on.
            await wait_until_async(lambda: app.runtime.current().info.export_key == OTHER, "the swap")
            await asyncio.sleep(0.3)  # more requests against the new pool
            running = False
            await task
            new = app.runtime.current()
            assert len(new) == 35
            assert new.header.export_name == OTHER  # served from the pack, not parsed
            assert (await client.get(f"/puzzles/{records[39]['canonical_id']}")).status_code == 200
        assert len(statuses) > 30
        assert set(statuses) == {200}

        # The swap drops the old pool in a thread once no request holds it (unmapping is slow).
        def dropped() -> bool:
            gc.collect()
            return released() is None and mapping() is None

        await wait_until_async(dropped, "the old pool released and unmapped")
    finally:
        await app.shutdown()


class RemoteStore(LocalStore):
    """A directory that is read as object storage is (streamed, never mapped), counting what it streams."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.opened: list[str] = []

    @property
    def path_of(self) -> None:  # type: ignore[override]
        return None

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        self.opened.append(key)
        async for chunk in super().open(key, start, end):
            yield chunk


async def test_workers_sharing_a_cache_dir_download_the_pack_once_and_map_one_file(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    exports, cache = tmp_path / "exports", tmp_path / "cache"
    exports.mkdir()
    await packed(exports, records)
    store = RemoteStore(exports)
    export = await newest(exports)
    loads = [load_export(store, export, cache_dir=cache) for _ in range(3)]
    pools = await asyncio.gather(*loads)
    assert all(report.packed for _, report in pools)
    assert store.opened == [pack_key(EXPORT)]
    assert (cache / pack_key(EXPORT)).exists()


class CountingStore(RemoteStore):
    """A :class:`RemoteStore` that records the most ranges it ever had open at once."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.open_now = self.most_open = 0

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            async for chunk in super().open(key, start, end):
                await asyncio.sleep(0)  # as a network read would, let the other ranges run
                yield chunk
        finally:
            self.open_now -= 1


@pytest.mark.parametrize("background", [False, True])
async def test_a_live_sync_downloads_a_pack_one_range_at_a_time_at_its_rate(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, background: bool
) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    await packed(exports, records)
    size = (exports / pack_key(EXPORT)).stat().st_size
    monkeypatch.setattr("sudokupool.loading.cache.PART_SIZE", -(-size // 6))  # six ranges
    store = CountingStore(exports)
    limits = LoadLimits(sync_download_rate=1)  # MiB a second
    started = asyncio.get_running_loop().time()
    pool, report = await load_export(store, await newest(exports), background=background, limits=limits)
    took = asyncio.get_running_loop().time() - started
    assert report.packed and len(pool) == len(records)
    if background:
        assert store.most_open == 1
        assert took >= size / (1 << 20) * 0.95  # no faster than the rate
    else:  # startup: every range at once, at full speed
        assert store.most_open == 6


def test_ids_chosen_to_share_their_low_bits_do_not_crowd_the_id_index(records: list[dict[str, Any]]) -> None:
    # The loader checks only an id's spelling. These 120 share their low 12 bits (read as base 36, the
    # last six characters decide them), so a table indexed by those bits would put them all in one slot
    # and probe up to 120 slots for each; keyed by the pack's random key, they spread as random ids do.
    rng = random.Random(5)
    ids = {"".join(rng.choices("0123456789ABCDEFGHJKMNPQRSTVWXYZ", k=7)) + "000000" for _ in range(120)}
    builder = PoolBuilder(loaded_at=1)
    for n, canonical_id in enumerate(sorted(ids)):
        builder.add(parse_record(record_line({**records[n % len(records)], "canonical_id": canonical_id})))
    pool = builder.build(source="t", export_key=EXPORT, export_size=0)
    builder.file.seek(0)
    data = builder.file.read()
    header = pack.read_header(data, len(data))
    offset, length = header.sections["table"]
    table = array("I", data[offset : offset + length])
    assert {int(i, 36) % 4096 for i in ids} == {0} and header.slots == 256
    probes = []
    for canonical_id in ids:
        slot = home = pack.slot_of(canonical_id, header.table_key, header.slots)
        while data[header.sections["ids"][0] + 13 * (table[slot] - 1) :][:13] != canonical_id.encode():
            slot = (slot + 1) % header.slots
        probes.append((slot - home) % header.slots + 1)
        assert pool.find(canonical_id) == table[slot] - 1
    assert max(probes) <= 24  # random ids: 1.6 on average, rarely past 15 at this load
    assert len({pack.slot_of(i, header.table_key, header.slots) for i in ids}) > 60


@pytest.mark.parametrize(("background", "lowered_by"), [(False, 0), (True, 10), (True, 3)])
async def test_a_background_load_checks_its_pack_in_a_nicer_thread(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, background: bool, lowered_by: int
) -> None:
    await packed(tmp_path, records[:6])
    seen: list[int] = []
    real = Pool.from_pack.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Pool], *args: Any, **kwargs: Any) -> Pool:
        seen.append(os.nice(0))
        return real(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Pool, "from_pack", classmethod(spy))
    pool, report = await load(tmp_path, background=background, limits=LoadLimits(sync_niceness=lowered_by or 10))
    assert report.packed and len(pool) == 6
    assert seen == [os.nice(0) + lowered_by]


def test_dropping_a_pools_pages_keeps_what_it_serves(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    pool = build_pool(records)
    bodies = [pool.gzip_body(i) for i in range(len(pool))]
    pool.drop_pages(step=4096)
    assert [pool.gzip_body(i) for i in range(len(pool))] == bodies
    assert pool.find(records[7]["canonical_id"]) == 7


async def test_without_a_cache_dir_a_local_pack_is_copied_once_into_a_directory_of_the_users_own(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    source = tmp_path / "exports"
    source.mkdir()
    path = await packed(source, records[:6])
    first, report = await load(source)
    assert report.packed
    [copy] = (tmp_path / "tmp").glob("sudokupool-*/*/pool-20260101T000000Z.pack")
    assert copy.read_bytes() == path.read_bytes()
    assert not copy.samefile(path)
    assert copy.parent.parent.stat().st_mode & 0o777 == 0o700
    # A second worker (or boot) maps the same copy: no second copy is made.
    made = copy.stat().st_mtime_ns
    second, report = await load(source)
    assert report.packed and copy.stat().st_mtime_ns == made
    os.truncate(path, 4096)
    same_pool(first, second)


async def test_copies_of_sources_no_running_process_uses_are_removed(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    base = tmp_path / "tmp" / f"sudokupool-{os.getuid()}"
    base.mkdir(mode=0o700, parents=True)
    stale, used = base / "0123456789abcdef", base / "fedcba9876543210"  # a stopped service's, a running one's
    for directory in (stale, used):
        directory.mkdir(mode=0o700)
        (directory / "pool-20250101T000000Z.pack").write_bytes(b"a copy")
    (base / "notes").mkdir()  # not a source's directory
    source = tmp_path / "exports"
    source.mkdir()
    await packed(source, records[:6])
    with (used / ".in-use").open("w") as in_use:
        fcntl.flock(in_use.fileno(), fcntl.LOCK_SH)  # what a running service holds
        _, report = await load(source)
        assert report.packed
        assert not stale.exists()
        assert (used / "pool-20250101T000000Z.pack").exists()
        assert (base / "notes").exists()
        [mine] = [d for d in base.iterdir() if d not in (used, base / "notes")]
    # This process holds its own directory's lock: a sweep by another process leaves it.
    with (mine / ".in-use").open() as probe, pytest.raises(BlockingIOError):
        fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


async def test_a_shared_temporary_directory_others_may_write_is_not_used_for_copies(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    base = tmp_path / "tmp" / f"sudokupool-{os.getuid()}"
    base.mkdir(parents=True)
    base.chmod(0o777)
    source = tmp_path / "exports"
    source.mkdir()
    await packed(source, records[:6])
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        _, report = await load(source)
    assert report.packed
    assert list(base.iterdir()) == []
    assert f"not copying packs into {base}: not a directory of this user's alone" in caplog.text
