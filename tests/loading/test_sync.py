"""Startup retries and fallback, and live sync, against a local directory store (fake stores for outages)."""

from __future__ import annotations

import asyncio
import gzip
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx
import orjson
import pytest

from sudokupool import state
from sudokupool.app import SudokuPool, create_app
from sudokupool.config import BUNDLED_SNAPSHOTS, BadLineLimit, Settings
from sudokupool.loading import loader, sync
from sudokupool.loading.loader import LoadError
from sudokupool.loading.packing import write_pack
from sudokupool.loading.shared import ListingFile
from sudokupool.loading.sync import Backoff, PoolSync
from sudokupool.pool.export import record_line
from sudokupool.serving.supervision import LAUNCHER_PID
from sudokupool.state import Runtime
from sudokupool.storage.base import ExportListing, StorageError
from sudokupool.storage.local import LocalStore
from sudokupool.storage.naming import export_order
from tests.factories import write_export
from tests.helpers import FakeClock, wait_until_async

pytestmark = pytest.mark.anyio

OLD = "pool-20260101T000000Z.ndjson.gz"
NEW = "pool-20260201T000000Z.ndjson.gz"
NEWER = "pool-20260301T000000Z.ndjson.gz"
INTERVAL = 0.2


# -- helpers ---------------------------------------------------------------------------------------


@asynccontextmanager
async def serving(directory: Path, **changes: Any) -> AsyncIterator[tuple[SudokuPool, httpx.AsyncClient]]:
    """The real app over ``directory``, started (startup, live sync) and stopped around the block."""
    settings = Settings(exports=str(directory), sync_interval=INTERVAL).replace(**changes)
    app = create_app(settings)
    await app.startup()
    try:
        transport = httpx.ASGITransport(app=app)
        # /api/v1 has no rate limit, so polling health cannot run into one.
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver/api/v1") as client:
            yield app, client
    finally:
        await app.shutdown()


async def health(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/health")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def truncated(records: list[dict[str, Any]]) -> bytes:
    return gzip.compress(b"".join(record_line(r) for r in records))[:-100]


class FlakyStore:
    """A local directory whose listing (or reading) fails while ``down`` says so, as unreachable storage does."""

    def __init__(self, path: Path, *, list_failures: int = 0, read_failures: int = 0) -> None:
        self.inner = LocalStore(path)
        self.list_failures = list_failures
        self.read_failures = read_failures
        self.down = False
        self.lists = 0
        self.reads = 0

    @property
    def description(self) -> str:
        return "s3://flaky/exports/"

    async def list_exports(self, limit: int) -> ExportListing:
        self.lists += 1
        if self.down or self.list_failures > 0:
            self.list_failures -= 1
            raise StorageError("s3://flaky/exports/: Connection refused")
        return await self.inner.list_exports(limit)

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        self.reads += 1
        async for chunk in self.inner.open(key, start, end):
            if self.read_failures > 0:
                self.read_failures -= 1
                raise StorageError(f"s3://flaky/{key}: read failed after 0 bytes (Connection reset)")
            yield chunk

    async def close(self) -> None:
        return None


def runtime_over(store: FlakyStore, **changes: Any) -> Runtime:
    return Runtime(Settings(sync_interval=0).replace(**changes), store=store)


async def synced(
    directory: Path, records: list[dict[str, Any]], **changes: Any
) -> tuple[FlakyStore, Runtime, PoolSync]:
    """A sync over ``directory`` that has loaded an export of five records (OLD); ``changes`` are settings."""
    write_export(directory / OLD, records[:5])
    store = FlakyStore(directory)
    runtime = runtime_over(store, **changes)
    sync = PoolSync(runtime)
    await sync.load_initial()
    return store, runtime, sync


# -- live sync through the app ---------------------------------------------------------------------


async def test_a_newer_export_is_swapped_in(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    trims: list[str] = []
    monkeypatch.setattr(state, "release_free_memory", lambda: trims.append("trim") or True)
    loads: list[tuple[bool, int]] = []
    real_load = sync.load_export

    async def spy(*args: Any, **kwargs: Any) -> Any:
        limits = kwargs["limits"]
        loads.append((kwargs.get("background", False), limits.sync_niceness))
        return await real_load(*args, **kwargs)

    monkeypatch.setattr(sync, "load_export", spy)
    write_export(tmp_path / OLD, records[:5])
    async with serving(tmp_path, sync_niceness=7) as (_, client):
        assert trims == ["trim"]  # after the startup load
        before = await health(client)
        assert before["export"]["key"] == OLD
        assert before["export"]["fallback"] is False
        write_export(tmp_path / NEW, records[5:12])

        async def swapped() -> bool:
            return bool((await health(client))["export"]["key"] == NEW)

        await wait_until_async(swapped, "swapped")
        after = await health(client)
        assert after["puzzles"] == 7
        assert after["export"]["exported_at"] == 1_769_904_000
        assert after["sync"]["last_success_at"] is not None
        assert after["sync"]["last_error"] is None
        response = await client.get(f"/puzzles/{records[6]['canonical_id']}")
        assert response.status_code == 200
        # The export's time, not the swap's: the same on every instance serving NEW.
        assert response.json()["synced_at"] == after["export"]["exported_at"]
        assert (await client.get("/stats")).json()["last_synced_at"] == after["export"]["exported_at"]
        assert (await client.get(f"/puzzles/{records[0]['canonical_id']}")).status_code == 404

        async def trimmed_again() -> bool:  # and after the swap, when the old pool is gone
            return trims == ["trim", "trim"]

        await wait_until_async(trimmed_again, "trimmed_again")
        # Startup loads at full priority; the live reload at SUDOKUPOOL_SYNC_NICENESS.
        assert loads == [(False, 7), (True, 7)]


async def test_instances_loading_one_export_at_different_times_answer_alike(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_export(tmp_path / OLD, records[:8])
    # Each instance loads at its own time: the first at t, the second an hour later.
    clock = FakeClock(1_780_000_000.0)
    monkeypatch.setattr(
        loader, "time", SimpleNamespace(time=clock, perf_counter=time.perf_counter, thread_time=time.thread_time)
    )
    async with serving(tmp_path) as (_, first):
        clock.advance(3600)
        async with serving(tmp_path) as (_, second):
            one, two = await health(first), await health(second)
            assert two["export"]["loaded_at"] - one["export"]["loaded_at"] == 3600
            assert one["export"]["exported_at"] == two["export"]["exported_at"] == 1_767_225_600
            stats = [(await client.get("/stats")).content for client in (first, second)]
            assert stats[0] == stats[1]
            assert orjson.loads(stats[0])["last_synced_at"] == 1_767_225_600
            for record in records[:8]:
                path = f"/puzzles/{record['canonical_id']}"
                for encoding in ("gzip", "identity"):
                    a, b = [await c.get(path, headers={"accept-encoding": encoding}) for c in (first, second)]
                    assert a.status_code == b.status_code == 200
                    assert a.headers["etag"] == b.headers["etag"]
                    assert a.content == b.content
                    assert a.json()["synced_at"] == 1_767_225_600
                # A validator from one instance holds at the other.
                etag = (await first.get(path)).headers["etag"]
                revalidated = await second.get(path, headers={"if-none-match": etag})
                assert revalidated.status_code == 304
                solution = [(await c.get(path + "/solution")).headers["etag"] for c in (first, second)]
                assert solution[0] == solution[1]


async def test_a_pack_swapped_in_is_not_followed_by_a_trim(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Mapping a pack frees no heap, and malloc_trim holds up the event loop while it runs.
    trims: list[str] = []
    monkeypatch.setattr(state, "release_free_memory", lambda: trims.append("trim") or True)
    installed: list[tuple[str, bool]] = []
    real_install = Runtime.install

    async def spy(self: Runtime, pool: Any) -> None:
        await real_install(self, pool)
        installed.append((pool.info.export_key, pool.info.parsed))

    monkeypatch.setattr(Runtime, "install", spy)
    write_export(tmp_path / OLD, records[:5])
    async with serving(tmp_path) as _:
        write_export(tmp_path / NEW, records[5:12])
        await write_pack(tmp_path / NEW)

        async def swapped() -> bool:
            return len(installed) == 2

        await wait_until_async(swapped, "swapped")
    assert installed == [(OLD, True), (NEW, False)]
    assert trims == ["trim"]  # after the startup parse only


async def test_a_pack_mapped_at_startup_is_followed_by_a_trim(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its checks leave free heap behind, and nothing is served yet that a trim could hold up.
    trims: list[str] = []
    monkeypatch.setattr(state, "release_free_memory", lambda: trims.append("trim") or True)
    write_export(tmp_path / OLD, records[:5])
    await write_pack(tmp_path / OLD)
    async with serving(tmp_path) as (app, _):
        assert app.runtime.pool is not None and not app.runtime.pool.info.parsed
        assert trims == ["trim"]


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda path, records: path.write_bytes(truncated(records)), id="truncated-gzip"),
        pytest.param(lambda path, records: path.write_bytes(b"\x1f\x8b not gzip at all"), id="corrupt-gzip"),
        pytest.param(
            lambda path, records: write_export(path, [], extra_lines=(b"{not json", b"[]")), id="no-valid-puzzle"
        ),
    ],
)
async def test_a_bad_newer_export_is_refused_once_and_the_pool_keeps_serving(
    tmp_path: Path,
    records: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
    write: Callable[[Path, list[dict[str, Any]]], object],
) -> None:
    write_export(tmp_path / OLD, records[:5])
    async with serving(tmp_path) as (app, client):
        write(tmp_path / NEW, records[5:12])

        async def refused() -> bool:
            error = (await health(client))["sync"]["last_error"]
            return error is not None and NEW in error

        with caplog.at_level(logging.INFO, logger="sudokupool.sync"):
            await wait_until_async(refused, "refused")
            assert app.sync is not None
            attempts = (await health(client))["sync"]["last_attempt_at"]
            # A few more intervals: the refused export is neither downloaded nor logged again.
            await anyio.sleep(INTERVAL * 4)
        body = await health(client)
        assert body["export"]["key"] == OLD
        assert body["puzzles"] == 5
        assert body["sync"]["last_error"].startswith(f"refused: cannot load export {tmp_path}/{NEW}")
        assert body["sync"]["last_error_at"] >= attempts
        assert (await client.get(f"/puzzles/{records[0]['canonical_id']}")).status_code == 200
        refusals = [r for r in caplog.records if r.name == "sudokupool.sync" and "refused" in r.getMessage()]
        assert len(refusals) == 1
        assert f"still serving {OLD}" in refusals[0].getMessage()


async def test_an_export_dated_in_the_future_is_refused_and_does_not_block_later_ones(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    _, runtime, sync = await synced(tmp_path, records)
    typo = "pool-20991231T000000Z.ndjson.gz"  # a year mistyped by hand: served, no later export could follow it
    write_export(tmp_path / typo, records[5:12])
    assert await sync.check() is False
    assert runtime.current().info.export_key == OLD
    assert runtime.sync.last_error == (
        f"refused: cannot load export s3://flaky/exports/{typo}: its name is dated 2099-12-31T00:00:00Z, "
        "more than an hour ahead of this machine's clock"
    )
    write_export(tmp_path / NEW, records[12:20])
    assert await sync.check() is True
    assert runtime.current().info.export_key == NEW


async def test_a_swap_logs_the_time_of_each_step_of_its_sync(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    _, runtime, sync = await synced(tmp_path, records)
    write_export(tmp_path / NEW, records[5:12])
    with caplog.at_level(logging.INFO, logger="sudokupool.sync"):
        assert await sync.check() is True
    [load] = [r for r in caplog.records if "loaded 7 puzzles" in r.getMessage()]
    assert 0 < load.__dict__["cpu"] <= load.__dict__["duration"]
    [swap] = [r for r in caplog.records if r.getMessage().startswith("now serving")]
    steps = {name: swap.__dict__[name] for name in ("list_seconds", "load_seconds", "install_seconds")}
    assert all(seconds >= 0 for seconds in steps.values())
    assert steps["load_seconds"] >= load.__dict__["duration"]
    assert swap.getMessage() == (
        f"now serving {runtime.current().info.export_key} (listed in {steps['list_seconds']:.2f} s, loaded in "
        f"{steps['load_seconds']:.2f} s, swapped in and the old pool let go in {steps['install_seconds']:.2f} s)"
    )


async def test_the_newest_good_export_behind_a_refused_one_is_loaded(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    store, runtime, sync = await synced(tmp_path, records)
    write_export(tmp_path / NEW, records[5:12])
    (tmp_path / NEWER).write_bytes(truncated(records))
    assert await sync.check() is True
    assert runtime.current().info.export_key == NEW
    # Still failing: the newest export is refused, and it is not downloaded again.
    reads = store.reads
    assert await sync.check() is False
    assert store.reads == reads
    assert runtime.sync.last_error is not None and NEWER in runtime.sync.last_error
    # The same key uploaded again (fixed) is tried again.
    write_export(tmp_path / NEWER, records[12:20])
    assert await sync.check() is True
    assert runtime.current().info.export_key == NEWER


@pytest.mark.parametrize(
    ("bound", "swapped"),
    [
        pytest.param("0.1%", False, id="default"),
        pytest.param("0", False, id="count-below"),
        pytest.param("1", True, id="count"),
        pytest.param("12%", False, id="share-below"),
        pytest.param("12.5%", True, id="share"),
    ],
)
async def test_a_sync_applies_the_bound_on_bad_lines(
    tmp_path: Path, records: list[dict[str, Any]], bound: str, swapped: bool
) -> None:
    _, runtime, sync = await synced(tmp_path, records, max_bad_lines=BadLineLimit.parse(bound))
    write_export(tmp_path / NEW, records[5:12], extra_lines=(b"{oops",))  # 1 bad line of 8: 12.5 %
    assert await sync.check() is swapped  # a live reload
    if swapped:
        assert runtime.current().info.export_key == NEW
        assert len(runtime.current()) == 7
        return
    assert runtime.current().info.export_key == OLD
    assert runtime.sync.last_error == (
        f"refused: cannot load export s3://flaky/exports/{NEW}: 1 bad line of 8 read, more than "
        f"SUDOKUPOOL_MAX_BAD_LINES={bound} allows; the first is line 8: invalid-json: "
        "unexpected character, expected a string key: line 1 column 2 (char 1)"
    )


async def test_a_refused_export_at_startup_serves_the_fallback(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    primary, fallback = tmp_path / "primary", tmp_path / "fallback"
    primary.mkdir()
    fallback.mkdir()
    write_export(primary / NEW, records[:5], extra_lines=(b"[]",))
    write_export(fallback / OLD, records[5:8])
    store = FlakyStore(primary)
    runtime = runtime_over(store, storage_retry_seconds=10, fallback_exports=str(fallback))
    fake = FakeClock()
    sync = PoolSync(runtime, sleep=fake.sleep, clock=fake)
    with caplog.at_level(logging.INFO, logger="sudokupool.sync"):
        await sync.load_initial()
    assert fake.slept == []  # a refusal is not retried
    assert runtime.current().info.export_key == OLD
    assert runtime.sync.fallback is True
    refusal = f"cannot load export s3://flaky/exports/{NEW}: 1 bad line of 6 read"
    assert runtime.sync.last_error is not None and runtime.sync.last_error.startswith(refusal)
    assert "serving the FALLBACK export" in caplog.text
    # The refused export is not downloaded again; a good newer one replaces the fallback.
    reads = store.reads
    assert await sync.check() is False
    assert store.reads == reads
    assert runtime.sync.fallback is True
    write_export(primary / NEWER, records[8:12])
    assert await sync.check() is True
    assert runtime.current().info.export_key == NEWER
    assert runtime.sync.fallback is False


async def test_never_goes_back_to_an_older_export(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    write_export(tmp_path / NEW, records[:5])
    runtime = runtime_over(FlakyStore(tmp_path))
    sync = PoolSync(runtime)
    await sync.load_initial()
    write_export(tmp_path / OLD, records[5:12])
    (tmp_path / NEW).unlink()
    assert await sync.check() is False
    assert runtime.current().info.export_key == NEW
    assert runtime.sync.last_error is None


async def test_a_storage_outage_during_sync_is_retried_not_refused(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    store, runtime, sync = await synced(tmp_path, records)
    write_export(tmp_path / NEW, records[5:12])
    store.read_failures = 1
    with caplog.at_level(logging.INFO, logger="sudokupool"):
        assert await sync.check() is False
        store.down = True
        assert await sync.check() is False
        assert await sync.check() is False
        assert (
            runtime.sync.last_error
            == "cannot list exports in s3://flaky/exports/: s3://flaky/exports/: Connection refused"
        )
        store.down = False
        assert await sync.check() is True
    assert runtime.current().info.export_key == NEW
    messages = [r.getMessage() for r in caplog.records if r.name in ("sudokupool.sync", "sudokupool.storage")]
    # One line when storage goes away (the read and the listing failures are one outage), one when it is back.
    assert len([m for m in messages if "still serving" in m]) == 1
    assert len([m for m in messages if "reachable again" in m]) == 1


async def test_an_outage_ends_when_storage_lists_again_not_when_the_load_is_done(
    tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, runtime, sync = await synced(tmp_path, records)
    store.down = True
    assert await sync.check() is False
    assert runtime.storage_outage.down
    store.down = False
    write_export(tmp_path / NEW, records[5:12])
    reading, release = asyncio.Event(), asyncio.Event()
    read = store.open

    async def slow(key: str, start: int = 0, end: int | None = None) -> AsyncIterator[bytes]:
        reading.set()
        await release.wait()
        async for chunk in read(key, start, end):
            yield chunk

    monkeypatch.setattr(store, "open", slow)
    checking = asyncio.create_task(sync.check())
    await reading.wait()
    assert not runtime.storage_outage.down
    release.set()
    assert await checking is True


async def test_shutdown_stops_the_sync_loop(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    write_export(tmp_path / OLD, records[:5])
    async with serving(tmp_path) as (app, _):
        assert app.sync is not None
        task = app.sync._task
        assert task is not None and not task.done()
    assert task.done()


async def test_sync_interval_zero_starts_no_loop(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    write_export(tmp_path / OLD, records[:5])
    async with serving(tmp_path, sync_interval=0) as (app, _):
        assert app.sync is not None
        assert app.sync._task is None


# -- startup ---------------------------------------------------------------------------------------


def test_backoff_grows_with_jitter_up_to_the_cap() -> None:
    lowest = list(zip(range(6), Backoff(first=0.5, cap=4.0).delays(lambda: 0.0), strict=False))
    highest = list(zip(range(6), Backoff(first=0.5, cap=4.0).delays(lambda: 1.0), strict=False))
    assert [d for _, d in lowest] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    assert [d for _, d in highest] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


async def test_startup_retries_unreachable_storage_then_loads(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    write_export(tmp_path / OLD, records[:5])
    store = FlakyStore(tmp_path, list_failures=3, read_failures=1)
    runtime = runtime_over(store, storage_retry_seconds=30)
    fake = FakeClock()
    sync = PoolSync(runtime, sleep=fake.sleep, clock=fake, rng=lambda: 1.0)
    with caplog.at_level(logging.INFO, logger="sudokupool.storage"):
        await sync.load_initial()
    assert runtime.current().info.export_key == OLD
    assert runtime.sync.fallback is False
    # Three listing failures and one read failure: four waits, doubling.
    assert fake.slept == [0.5, 1.0, 2.0, 4.0]
    # ...and two lines: the outage's start and its end, not one per retry.
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sudokupool.storage"]
    assert len(lines) == 2
    assert lines[0][0] == "WARNING"
    assert lines[0][1].startswith("storage unreachable: cannot list exports in s3://flaky/exports/")
    assert lines[0][1].endswith("; retrying for up to 30 s")
    assert lines[1][0] == "INFO"
    assert lines[1][1].startswith("storage is reachable again after ")
    assert lines[1][1].endswith("; 4 call(s) failed meanwhile")


async def test_startup_falls_back_when_storage_stays_down_then_switches_back(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    primary, fallback = tmp_path / "primary", tmp_path / "fallback"
    primary.mkdir()
    fallback.mkdir()
    write_export(primary / NEW, records[:5])
    write_export(fallback / OLD, records[5:8])
    store = FlakyStore(primary)
    store.down = True
    runtime = runtime_over(store, storage_retry_seconds=10, fallback_exports=str(fallback))
    fake = FakeClock()
    sync = PoolSync(runtime, sleep=fake.sleep, clock=fake, rng=lambda: 1.0)
    with caplog.at_level(logging.INFO, logger="sudokupool.sync"):
        await sync.load_initial()
    assert sum(fake.slept) == 10
    assert max(fake.slept) <= Backoff().cap
    assert runtime.current().info.export_key == OLD
    assert runtime.current().info.source == str(fallback)
    assert runtime.sync.fallback is True
    assert runtime.sync.last_error is not None and "Connection refused" in runtime.sync.last_error
    assert "serving the FALLBACK export" in caplog.text
    # Storage still down: the fallback keeps serving.
    assert await sync.check() is False
    assert runtime.sync.fallback is True
    store.down = False
    assert await sync.check() is True
    assert runtime.current().info.export_key == NEW
    assert runtime.sync.fallback is False


async def test_startup_without_storage_or_fallback_fails_with_one_line(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path)
    store.down = True
    fake = FakeClock()
    sync = PoolSync(runtime_over(store, storage_retry_seconds=5), sleep=fake.sleep, clock=fake)
    with pytest.raises(LoadError) as caught:
        await sync.load_initial()
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "cannot list exports in s3://flaky/exports/: s3://flaky/exports/: Connection refused "
        "(still unreachable after 5 s of retries); no SUDOKUPOOL_FALLBACK_EXPORTS to serve instead"
    )


@pytest.mark.parametrize(
    ("write", "message"),
    [
        pytest.param(lambda d, r: (d / OLD).write_bytes(truncated(r)), "truncated gzip stream", id="truncated"),
        pytest.param(lambda d, r: None, "no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz]) found", id="empty"),
    ],
)
async def test_a_bad_export_at_startup_fails_at_once(
    tmp_path: Path,
    records: list[dict[str, Any]],
    write: Callable[[Path, list[dict[str, Any]]], object],
    message: str,
) -> None:
    write(tmp_path, records[:5])
    fake = FakeClock()
    sync = PoolSync(runtime_over(FlakyStore(tmp_path), storage_retry_seconds=30), sleep=fake.sleep, clock=fake)
    with pytest.raises(LoadError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        await sync.load_initial()
    assert fake.slept == []


async def test_a_missing_local_directory_is_not_retried(tmp_path: Path) -> None:
    runtime = Runtime(Settings(storage_retry_seconds=30), store=LocalStore(tmp_path / "nowhere"))
    fake = FakeClock()
    with pytest.raises(LoadError) as caught:
        await PoolSync(runtime, sleep=fake.sleep, clock=fake).load_initial()
    # No word of SUDOKUPOOL_FALLBACK_EXPORTS: it is for object storage that cannot be reached.
    assert (
        str(caught.value) == f"cannot list exports in {tmp_path}/nowhere: {tmp_path}/nowhere: no such file or directory"
    )
    assert fake.slept == []


async def test_a_bucket_that_does_not_exist_fails_startup_at_once(tmp_path: Path) -> None:
    class NoSuchBucket(FlakyStore):
        async def list_exports(self, limit: int) -> ExportListing:
            raise StorageError("s3://flaky/exports/: NoSuchBucket: The specified bucket does not exist", permanent=True)

    fake = FakeClock()
    sync = PoolSync(runtime_over(NoSuchBucket(tmp_path), storage_retry_seconds=30), sleep=fake.sleep, clock=fake)
    with pytest.raises(LoadError) as caught:
        await sync.load_initial()
    assert str(caught.value) == (
        "cannot list exports in s3://flaky/exports/: "
        "s3://flaky/exports/: NoSuchBucket: The specified bucket does not exist"
    )
    assert fake.slept == []


async def test_a_malformed_s3_url_fails_startup_with_one_line() -> None:
    app = create_app(Settings(exports="s3:///prefix/"))
    with pytest.raises(LoadError, match=r"^SUDOKUPOOL_EXPORTS: 's3:///prefix/' has no bucket name"):
        await app.startup()


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        pytest.param("exports/pool-20260101T000000Z.ndjson.gz", True, id="export"),
        pytest.param("snapshot.ndjson", False, id="other-name"),
    ],
)
def test_export_order(key: str, expected: bool) -> None:
    assert (export_order(key) is not None) is expected


async def test_the_workers_of_an_instance_share_one_listing(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    exports, shared = tmp_path / "exports", tmp_path / "shared.json"
    exports.mkdir()
    write_export(exports / OLD, records[:5])
    store = FlakyStore(exports)
    clock = FakeClock(1000.0)
    workers = [PoolSync(runtime_over(store), shared=ListingFile(shared, 300, clock=clock)) for _ in range(3)]
    for worker in workers:
        await worker.load_initial()
    store.lists = 0
    write_export(exports / NEW, records[5:9])
    # One worker lists storage; the others read its listing, and every one swaps in NEW.
    assert [await worker.check() for worker in workers] == [True, True, True]
    assert store.lists == 1
    assert {worker.runtime.current().info.export_key for worker in workers} == {NEW}
    # Past its age, the next worker to look lists again, once.
    clock.advance(301)
    assert [await worker.check() for worker in workers] == [False, False, False]
    assert store.lists == 2
    # A failed listing is not shared: each worker meets the outage itself.
    clock.advance(301)
    store.down = True
    assert [await worker.check() for worker in workers] == [False, False, False]
    assert store.lists == 5


def test_a_listing_is_shared_only_by_the_workers_of_a_launcher(tmp_path: Path) -> None:
    source = "s3://bucket/exports/"
    assert ListingFile.for_instance({}, source, 300) is None
    assert ListingFile.for_instance({LAUNCHER_PID: "42", "WEB_CONCURRENCY": "1"}, source, 300) is None
    assert ListingFile.for_instance({LAUNCHER_PID: "42", "WEB_CONCURRENCY": "2"}, source, 0) is None
    shared = ListingFile.for_instance({LAUNCHER_PID: "42", "WEB_CONCURRENCY": "2"}, source, 300)
    assert shared is not None and shared.path.name.startswith("sudokupool-listing-42-")
    other = ListingFile.for_instance({LAUNCHER_PID: "42", "WEB_CONCURRENCY": "2"}, "s3://other/", 300)
    assert other is not None and other.path != shared.path


@pytest.mark.parametrize(
    ("exports", "note"),
    [
        pytest.param("", "the DEMO pool (snapshots/, as SUDOKUPOOL_EXPORTS is not set): ", id="not-set"),
        pytest.param(str(BUNDLED_SNAPSHOTS), "the DEMO pool (snapshots/): ", id="set-to-it"),
    ],
)
async def test_the_load_line_of_the_demo_pool_names_it(
    caplog: pytest.LogCaptureFixture, exports: str, note: str
) -> None:
    # SUDOKUPOOL_EXPORT (misspelt) leaves SUDOKUPOOL_EXPORTS unset: the demo pool is served, and said to be.
    [demo] = BUNDLED_SNAPSHOTS.glob("pool-*.ndjson.gz")
    with caplog.at_level(logging.INFO, logger="sudokupool.sync"):
        app = create_app(Settings(exports=exports, sync_interval=0))
        await app.startup()
        await app.shutdown()
    assert f"{note}{demo.name}: loaded 2400 puzzles" in caplog.text


async def test_the_load_line_of_an_operators_pool_says_nothing_of_a_demo(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    write_export(tmp_path / OLD, records[:5])
    with caplog.at_level(logging.INFO, logger="sudokupool.sync"):
        async with serving(tmp_path, sync_interval=0):
            pass
    assert f"{OLD}: loaded 5 puzzles, skipped 0" in caplog.text
    assert "DEMO" not in caplog.text
