from __future__ import annotations

import asyncio
import gzip
import logging
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sudokupool.config import BadLineLimit, Settings
from sudokupool.loading import loader
from sudokupool.loading.loader import (
    LoadError,
    LoadLimits,
    load_export,
    load_latest,
    parse_export,
)
from sudokupool.pool.export import record_line
from sudokupool.storage.base import StorageError
from sudokupool.storage.local import LocalStore
from tests.factories import write_export
from tests.helpers import wait_until_async

pytestmark = pytest.mark.anyio

#: Bad lines are skipped, however many there are.
LENIENT = LoadLimits(max_bad_lines=BadLineLimit.parse("100%"))


async def test_loads_the_latest_export(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    write_export(tmp_path / "pool-20250101T000000Z.ndjson.gz", records[:5])
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:7])
    write_export(tmp_path / "notes.ndjson.gz", records)
    pool, report = await load_latest(LocalStore(tmp_path), loaded_at=123)
    assert len(pool) == 7
    assert report.loaded == 7
    assert pool.info.export_key == "pool-20260101T000000Z.ndjson"
    assert pool.info.loaded_at == 123


async def test_bad_lines_are_skipped_counted_and_logged(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    bad = [
        b"{not json",
        orjson.dumps({**records[1], "clue_count": 99}),
        record_line(records[0]).rstrip(b"\n"),  # a duplicate canonical_id
    ]
    write_export(tmp_path / "pool-20260101T000000Z.ndjson.gz", records[:4], extra_lines=tuple(bad))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool, report = await load_latest(LocalStore(tmp_path), limits=LENIENT)
    assert len(pool) == 4
    assert dict(report.skipped) == {"invalid-json": 1, "bad-clue-count": 1, "duplicate-id": 1}
    assert [number for number, _ in report.problems] == [5, 6, 7]
    assert "line 6 skipped: bad-clue-count" in caplog.text
    assert "loaded 4 puzzles, skipped 3" in report.summary()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda d, r: None, "no export", id="empty-directory"),
        pytest.param(
            lambda d, r: (d / "pool-20260101T000000Z.ndjson.gz").write_bytes(
                gzip.compress(b"".join(record_line(x) for x in r))[:-200]
            ),
            "truncated gzip",
            id="truncated-gzip",
        ),
        pytest.param(
            lambda d, r: (d / "pool-20260101T000000Z.ndjson").write_bytes(b"nonsense\n[]\n"),
            "no valid puzzle in it .*; the first bad line is line 1: invalid-json",
            id="no-valid-puzzle",
        ),
        pytest.param(
            lambda d, r: (d / "pool-20260101T000000Z.ndjson.gz").write_bytes(b"plain text, not gzip\n"),
            "not a valid gzip",
            id="not-gzip",
        ),
    ],
)
async def test_unusable_exports_raise_one_clear_error(
    tmp_path: Path, records: list[dict[str, Any]], make: Any, message: str
) -> None:
    make(tmp_path, records)
    with pytest.raises(LoadError, match=message) as info:
        await load_latest(LocalStore(tmp_path))
    assert str(tmp_path) in str(info.value)


def bad_lines_export(directory: Path, records: list[dict[str, Any]]) -> Path:
    """7 records, then 3 bad lines: 10 lines, 30 % of them bad."""
    bad = (b"{not json", orjson.dumps({**records[1], "clue_count": 99}), record_line(records[0]).rstrip(b"\n"))
    return write_export(directory / "pool-20260101T000000Z.ndjson.gz", records[:7], extra_lines=bad)


@pytest.mark.parametrize(
    ("limit", "served"),
    [
        pytest.param("0.1%", False, id="default"),
        pytest.param("2", False, id="count-below"),
        pytest.param("3", True, id="count-equal"),
        pytest.param("29%", False, id="share-below"),
        pytest.param("30%", True, id="share-equal"),
    ],
)
async def test_an_export_with_more_bad_lines_than_allowed_is_refused(
    tmp_path: Path, records: list[dict[str, Any]], limit: str, served: bool
) -> None:
    path = bad_lines_export(tmp_path, records)
    store = LocalStore(path)
    export = (await store.list_exports(1)).objects[0]
    limits = LoadLimits(max_bad_lines=BadLineLimit.parse(limit))
    if served:
        pool, report = await load_export(store, export, limits=limits)
        assert len(pool) == report.loaded == 7
        return
    with pytest.raises(LoadError) as caught:
        await load_export(store, export, limits=limits)
    assert str(caught.value) == (
        f"cannot load export {path}: 3 bad lines of 10 read, more than SUDOKUPOOL_MAX_BAD_LINES={limit} allows; "
        "the first is line 8: invalid-json: unexpected character, expected a string key: line 1 column 2 (char 1)"
    )


@pytest.mark.parametrize("background", [False, True])
async def test_a_flood_of_bad_lines_is_refused_before_the_end(
    tmp_path: Path, records: list[dict[str, Any]], background: bool
) -> None:
    # 8 MiB of "x" lines (in several chunks), then good records: the share of bad lines is past the
    # bound whatever the rest of the file holds, so the load stops long before the end.
    data = b"x\n" * (4 << 20) + b"".join(record_line(r) for r in records)
    path = tmp_path / "pool-20260101T000000Z.ndjson"
    path.write_bytes(data)
    store = LocalStore(path)
    export = (await store.list_exports(1)).objects[0]
    with pytest.raises(LoadError) as caught:
        await load_export(store, export, background=background)
    message = str(caught.value)
    assert "allows; the first is line 1: invalid-json" in message
    report = caught.value.report
    assert report is not None
    # The file can hold at most 14 good records (625 bytes each at least), so 15 bad lines settle it; the
    # loader reads on to list the first 20.
    assert report.lines == report.skipped_total == loader.MAX_LOGGED_LINES + 1
    assert len(report.problems) == loader.MAX_LOGGED_LINES


async def test_bad_lines_are_logged_one_by_one_only_up_to_a_cap(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:3], extra_lines=(b"[]",) * 500)
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        _, report = await load_latest(LocalStore(tmp_path), limits=LENIENT)
    assert report.skipped == {"not-an-object": 500}
    assert len(report.problems) == loader.MAX_LOGGED_LINES == 20
    assert caplog.text.count(" skipped: not-an-object") == 20
    assert "480 more bad lines skipped (only the first 20 are logged)" in caplog.text


#: Stands for a value nested 300 deep in a record, spliced into its line as text (orjson cannot write it).
DEEP = "@deep@"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(
            lambda step: {**step, "explanation": DEEP}, r"explanation: Expected `str`, got `array`", id="deep"
        ),
        pytest.param(lambda step: {**step, "note": DEEP}, "unknown field `note`", id="deep-extra-field"),
        pytest.param(lambda step: {**step, "score": "4"}, r"score: Expected `int`, got `str`", id="score"),
        pytest.param(lambda step: {**step, "digits": [1, "2"]}, r"digits\[1\]: Expected `int`, got `str`", id="digits"),
        pytest.param(
            lambda step: {**step, "placements": [{"cell": "r1c1", "digit": 1, "more": DEEP}]},
            r"placements\[0\]: Object contains unknown field `more`",
            id="deep-placement",
        ),
        pytest.param(
            lambda step: {k: v for k, v in step.items() if k != "cells"}, "missing required field `cells`", id="missing"
        ),
    ],
)
async def test_every_solve_path_step_is_validated(
    tmp_path: Path, records: list[dict[str, Any]], change: Any, reason: str
) -> None:
    # A value nested 300 deep parses, but orjson cannot write it: before steps were validated, that
    # record failed the whole load with a TypeError (a 500 on every request, a traceback in check).
    broken = dict(records[1])
    broken["solve_path"] = [broken["solve_path"][0], change(broken["solve_path"][1]), *broken["solve_path"][2:]]
    path = tmp_path / "pool-20260101T000000Z.ndjson"
    lines = [record_line(r) for r in [records[0], broken, *records[2:5]]]
    path.write_bytes(b"".join(lines).replace(b'"' + DEEP.encode() + b'"', b"[" * 300 + b"1" + b"]" * 300))
    store = LocalStore(path)
    export = (await store.list_exports(1)).objects[0]
    with pytest.raises(LoadError, match=f"the first is line 2: bad-step: solve_path step 2[: ].*{reason}"):
        await load_export(store, export)
    pool, report = await load_export(store, export, limits=LENIENT)
    assert len(pool) == 4
    assert report.skipped == {"bad-step": 1}


async def test_lines_past_the_record_bound_are_skipped(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    big = orjson.dumps({**records[1], "padding": "p" * 70_000})
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson.gz", records[:3], extra_lines=(big,))
    store = LocalStore(path)
    export = (await store.list_exports(1)).objects[0]
    limits = LoadLimits(max_record_bytes=60_000, max_bad_lines=BadLineLimit.parse("1"))
    pool, report = await load_export(store, export, limits=limits)
    assert len(pool) == 3
    assert report.skipped == {"too-long": 1}
    assert report.problems[0][0] == 4
    with pytest.raises(LoadError, match="the first is line 4: too-long"):
        await load_export(store, export, limits=LoadLimits(max_record_bytes=60_000))


@pytest.mark.parametrize("background", [False, True])
async def test_an_export_inflating_past_the_bound_is_refused(
    tmp_path: Path, records: list[dict[str, Any]], background: bool
) -> None:
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson.gz", records)
    store = LocalStore(path)
    export = (await store.list_exports(1)).objects[0]
    with pytest.raises(LoadError, match=r"inflates to more than 100000 bytes \(SUDOKUPOOL_MAX_EXPORT_BYTES\)"):
        await load_export(store, export, background=background, limits=LoadLimits(max_export_bytes=100_000))


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        pytest.param(MemoryError(), "line 3: out of memory (MemoryError)", id="memory"),
        pytest.param(RuntimeError("boom"), "line 3: RuntimeError: boom", id="unexpected"),
    ],
)
async def test_anything_failing_on_a_line_refuses_the_export_naming_the_line(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, failure: Exception, message: str
) -> None:
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:5])
    parse = loader.parse_record

    def failing(line: bytes, **kwargs: Any) -> dict[str, Any]:
        if line == record_line(records[2]).rstrip(b"\n"):
            raise failure
        return parse(line, **kwargs)

    monkeypatch.setattr(loader, "parse_record", failing)
    with pytest.raises(LoadError) as caught:
        await load_latest(LocalStore(path))
    assert str(caught.value) == f"cannot load export {path}: {message}"


async def test_missing_directory_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file or directory"):
        await load_latest(LocalStore(tmp_path / "missing"))


async def test_a_single_file_is_loaded_only_under_an_export_name(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    path = write_export(tmp_path / "my-export.ndjson", records[:3])
    with pytest.raises(LoadError, match=f"{path}: not an export name; name it pool-YYYYMMDDTHHMMSSZ"):
        await load_latest(LocalStore(path))
    pool, _ = await load_latest(LocalStore(path.rename(tmp_path / "pool-20260101T000000Z.ndjson")))
    assert len(pool) == 3


async def test_a_background_load_builds_the_same_pool_as_a_startup_load(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    duplicate = record_line(records[0]).rstrip(b"\n")
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records, extra_lines=(duplicate, b"{bad"))
    store = LocalStore(tmp_path)
    export = (await store.list_exports(1)).objects[0]
    startup, startup_report = await load_export(store, export, loaded_at=5, limits=LENIENT)
    background, background_report = await load_export(store, export, loaded_at=5, background=True, limits=LENIENT)
    assert len(background) == len(startup) == len(records)
    assert [background.body(i) for i in range(len(background))] == [startup.body(i) for i in range(len(startup))]
    assert [background.etag(i, solution=True) for i in range(len(background))] == [
        startup.etag(i, solution=True) for i in range(len(startup))
    ]
    assert background.stats_body == startup.stats_body
    assert background_report.problems == startup_report.problems
    assert dict(background_report.skipped) == {"duplicate-id": 1, "invalid-json": 1}
    assert background_report.problems[0] == (
        len(records) + 1,
        f"duplicate-id: {records[0]['canonical_id']} appeared before",
    )


@pytest.mark.parametrize(
    ("background", "niceness", "lowered_by"),
    [(False, None, 0), (False, 5, 0), (True, None, Settings.sync_niceness), (True, 3, 3)],
)
async def test_a_background_load_runs_its_threads_nicer_than_the_server(
    tmp_path: Path, records: list[dict[str, Any]], background: bool, niceness: int | None, lowered_by: int
) -> None:
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:4])
    store = LocalStore(tmp_path)
    export = (await store.list_exports(1)).objects[0]
    ours = os.nice(0)
    seen: list[int] = []
    verify = lambda record: seen.append(os.nice(0))  # noqa: E731 - runs in the loader's threads
    limits = LoadLimits() if niceness is None else LoadLimits(sync_niceness=niceness)
    pool, _ = await parse_export(store, export, verify=verify, background=background, limits=limits)
    assert len(pool) == 4
    assert set(seen) == {ours + lowered_by}
    assert os.nice(0) == ours  # the serving thread keeps its priority


async def test_a_loads_report_counts_the_cpu_of_its_threads_apart_from_its_time(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    # What a load waited for (a core, storage) is its time less its CPU: the report says both.
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records)
    store = LocalStore(tmp_path)
    export = (await store.list_exports(1)).objects[0]
    spun: list[float] = []
    verify = lambda record: spun.append(busy(0.002))  # noqa: E731 - CPU in the loader's thread
    _, report = await parse_export(store, export, verify=verify)
    assert 0.002 * len(records) <= report.cpu_seconds <= report.seconds
    assert f"({report.cpu_seconds:.2f} s of CPU)" in report.summary()
    assert report.fields()["cpu"] == round(report.cpu_seconds, 3)
    _, packed = await load_export(store, export, cache_dir=tmp_path / "cache")  # its pack made, then mapped
    assert packed.cpu_seconds > 0
    _, mapped = await load_export(store, export, cache_dir=tmp_path / "cache")
    assert mapped.packed and 0 < mapped.cpu_seconds <= mapped.seconds


def busy(seconds: float) -> float:
    """Spend ``seconds`` of this thread's CPU."""
    started = time.thread_time()
    while time.thread_time() - started < seconds:
        pass
    return seconds


class FailingStore(LocalStore):
    """A local directory read as object storage is (downloaded, not read in place), whose reads fail after
    ``chunks`` chunks, as a dropped storage connection does."""

    def __init__(self, path: Path, chunks: int) -> None:
        super().__init__(path)
        self.chunks = chunks

    @property
    def path_of(self) -> None:  # type: ignore[override]
        return None

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        sent = 0
        async for chunk in super().open(key, start, end):
            if sent == self.chunks:
                raise StorageError(f"{key}: read failed (Connection reset)")
            sent += 1
            yield chunk


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(lambda r: gzip.compress(b"".join(record_line(x) for x in r))[:-200], "truncated gzip", id="cut"),
        pytest.param(lambda r: b"plain text, not gzip\n" * 50_000, "not a valid gzip", id="not-gzip"),
    ],
)
@pytest.mark.parametrize("background", [False, True])
async def test_worker_loads_report_a_bad_stream_as_one_clear_error(
    tmp_path: Path, records: list[dict[str, Any]], content: Any, message: str, background: bool
) -> None:
    (tmp_path / "pool-20260101T000000Z.ndjson.gz").write_bytes(content(records))
    store = LocalStore(tmp_path)
    export = (await store.list_exports(1)).objects[0]
    with pytest.raises(LoadError, match=message):
        await load_export(store, export, background=background)


@pytest.mark.parametrize("background", [False, True])
async def test_a_storage_failure_mid_load_refuses_the_export_until_storage_answers(
    tmp_path: Path, records: list[dict[str, Any]], background: bool
) -> None:
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records)  # several 256 KiB chunks
    store = FailingStore(tmp_path, chunks=1)
    export = (await store.list_exports(1)).objects[0]
    with pytest.raises(LoadError, match=r"read failed \(Connection reset\)") as caught:
        await load_export(store, export, background=background)
    assert caught.value.unreachable
    # The same export loads whole once storage answers again.
    pool, report = await load_export(FailingStore(tmp_path, chunks=1000), export, background=background)
    assert len(pool) == report.loaded == len(records)


async def test_an_export_in_object_storage_larger_than_the_bound_is_not_downloaded(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson.gz", records)
    store = FailingStore(tmp_path, chunks=0)  # any read fails
    export = (await store.list_exports(1)).objects[0]
    bound = path.stat().st_size - 1
    with pytest.raises(LoadError, match=rf"it is {bound + 1} bytes, more than {bound} \(SUDOKUPOOL_MAX_EXPORT_BYTES\)"):
        await load_export(store, export, limits=LoadLimits(max_export_bytes=bound))


class Stalling(FailingStore):
    """Hands out the first chunk of a download, then waits as a slow storage connection does."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, chunks=1000)
        self.stalled = asyncio.Event()

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        async for chunk in super().open(key, start, end):
            yield chunk
            self.stalled.set()
            await asyncio.sleep(3600)


@pytest.mark.parametrize("where", ["download", "parse"])
async def test_a_stopped_background_load_leaves_no_thread_or_file_behind(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # The live sync stops a load in progress at shutdown: its thread must end and its pack file go, whether
    # the export is still being downloaded or already being parsed.
    write_export(tmp_path / "pool-20260101T000000Z.ndjson", records * 10)  # duplicates are fine
    parsing = threading.Event()
    parse = loader.parse_record

    def slow(line: bytes) -> Any:
        parsing.set()
        time.sleep(0.1)  # the 400 lines would take 40 s
        return parse(line)

    monkeypatch.setattr(loader, "parse_record", slow)
    store, cache = (Stalling(tmp_path) if where == "download" else LocalStore(tmp_path)), tmp_path / "cache"
    export = (await store.list_exports(1)).objects[0]
    load = asyncio.create_task(load_export(store, export, background=True, cache_dir=cache))
    if isinstance(store, Stalling):
        await store.stalled.wait()
    else:
        await asyncio.to_thread(parsing.wait)
    await asyncio.sleep(0.2)
    load.cancel()
    with pytest.raises(asyncio.CancelledError):
        await load
    await wait_until_async(
        lambda: not any(thread.name.startswith("sudokupool-load") for thread in threading.enumerate()),
        "the load's threads ending",
        seconds=5,
    )
    assert not any(thread.name.startswith("sudokupool-load") for thread in threading.enumerate())
    assert [path.name for path in cache.iterdir()] == [".pool-20260101T000000Z.pack.lock"]
