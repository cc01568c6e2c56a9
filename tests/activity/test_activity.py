from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
import redis

from sudokupool.activity import make_activity
from sudokupool.activity.counters import Activity
from sudokupool.activity.redis import RedisActivity
from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from tests.helpers import FakeClock, running, wait_until_async
from tests.valkey import ValkeyCluster, ValkeyServer

pytestmark = pytest.mark.anyio

KEY = "sudokupool:activity"
SINCE = 1_795_000_000


def redis_settings(server: ValkeyServer, *, flush_seconds: float = 3600.0) -> Settings:
    # Live sync off: these tests own the lifespan and want no other background task in it.
    return Settings(redis_url=server.url, redis_timeout=2.0, activity_flush_seconds=flush_seconds, sync_interval=0)


def totals(server: ValkeyServer) -> dict[str, int]:
    with redis.Redis(port=server.port, socket_timeout=5) as client:
        raw: dict[bytes, bytes] = client.hgetall(KEY)
    return {field.decode(): int(value) for field, value in raw.items()}


def commands_processed(server: ValkeyServer) -> int:
    with redis.Redis(port=server.port, socket_timeout=5) as client:
        info: dict[str, Any] = client.info("stats")
    return int(info["total_commands_processed"])


def hgetall_calls(server: ValkeyServer) -> int:
    with redis.Redis(port=server.port, socket_timeout=5) as client:
        info: dict[str, Any] = client.info("commandstats")
    return int(info.get("cmdstat_hgetall", {}).get("calls", 0))


async def wait_for_totals(server: ValkeyServer, expected: dict[str, int]) -> dict[str, int]:
    """Redis's totals once they contain ``expected`` (the flusher runs on its own schedule)."""

    found: dict[str, int] = {}

    def reached() -> bool:
        found.clear()
        found.update(totals(server))
        return all(found.get(name) == value for name, value in expected.items())

    await wait_until_async(reached, f"the totals {expected}")
    return found


async def test_in_memory_counts_and_shape() -> None:
    activity = Activity(now=SINCE)
    for event in ("random", "random", "by_id", "solution", "image_puzzle", "exports_listing"):
        activity.record(event)
    await activity.start()
    body = await activity.snapshot_async()
    await activity.aclose()
    assert body == {
        "scope": "instance",
        "covers": "this worker process since it started; other workers and instances keep their own counts",
        "since": SINCE,
        "plays": {"random": 2, "by_id": 1, "daily": 0, "total": 3},
        "downloads": {"solution": 1, "image_puzzle": 1, "image_solution": 0, "exports_listing": 1, "total": 3},
    }
    assert body == activity.snapshot()


async def test_the_settings_choose_the_counter(valkey: ValkeyServer) -> None:
    local = make_activity(Settings())
    shared = make_activity(redis_settings(valkey))
    await shared.aclose()
    assert type(local) is Activity
    assert isinstance(shared, RedisActivity)


async def test_two_instances_report_the_cluster_total(pool: Pool, valkey: ValkeyServer, records: list[Any]) -> None:
    one = create_app(redis_settings(valkey, flush_seconds=0.05), pool=pool)
    two = create_app(redis_settings(valkey, flush_seconds=0.05), pool=pool)
    share_code = records[0]["canonical_id"]
    async with running(one) as first, running(two) as second:
        for _ in range(3):
            assert (await first.get("/api/v1/puzzles/random")).status_code == 200
        assert (await second.get(f"/api/v2/puzzles/{share_code}")).status_code == 200
        assert (await second.get(f"/api/puzzles/{share_code}/solution")).status_code == 200
        stored = await wait_for_totals(valkey, {"random": 3, "by_id": 1, "solution": 1})
        responses = [await first.get("/api/v2/stats/activity"), await second.get("/api/v1/stats/activity")]
    for response in responses:
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-store"
        body = response.json()
        assert body["scope"] == "cluster"
        assert body["covers"].startswith("all instances sharing this Redis, since their shared counters started (")
        assert body["since"] == stored["since"]
        assert body["plays"] == {"random": 3, "by_id": 1, "daily": 0, "total": 4}
        assert body["downloads"]["solution"] == 1
        assert body["downloads"]["total"] == 1


async def test_unflushed_counts_are_shown_and_sent_at_shutdown(pool: Pool, valkey: ValkeyServer) -> None:
    app = create_app(redis_settings(valkey), pool=pool)
    async with running(app) as client:
        await wait_for_totals(valkey, {"since": app.runtime.activity.since})
        await client.get("/api/v1/puzzles/random")
        await client.get("/api/v1/puzzles/random")
        during = (await client.get("/api/v2/stats/activity")).json()
        # The flusher waits an hour between flushes: nothing of those two plays has reached Redis yet.
        assert "random" not in totals(valkey)
    after = totals(valkey)
    assert during["scope"] == "cluster"
    assert during["plays"]["random"] == 2
    assert after["random"] == 2
    assert after["since"] == during["since"]


async def test_requests_cost_no_redis_round_trip(pool: Pool, valkey: ValkeyServer, records: list[Any]) -> None:
    app = create_app(redis_settings(valkey), pool=pool)
    async with running(app) as client:
        # The first flush (at startup) has written ``since``; the next one is an hour away.
        await wait_for_totals(valkey, {"since": app.runtime.activity.since})
        await anyio.sleep(0.05)
        # INFO itself is a command: what two INFOs in a row differ by is the zero of this measurement.
        first = commands_processed(valkey)
        idle = commands_processed(valkey) - first
        before = commands_processed(valkey)
        for record in records[:10]:
            # /api/v1: no rate limiter, so any Redis command here would be the activity counter's.
            assert (await client.get(f"/api/v1/puzzles/{record['canonical_id']}")).status_code == 200
            assert (await client.get("/api/v1/puzzles/random")).status_code == 200
        after = commands_processed(valkey)
        assert app.runtime.activity.counts["by_id"] == 10
    assert after - before == idle


async def test_reads_are_cached(valkey: ValkeyServer) -> None:
    clock = FakeClock(100.0)
    activity = RedisActivity.from_url(valkey.url, timeout=2.0, cache_seconds=1.0, monotonic=clock)
    try:
        assert await activity.flush()
        calls = hgetall_calls(valkey)
        for _ in range(20):
            activity.record("random")
            body = await activity.snapshot_async()
        cached_calls = hgetall_calls(valkey) - calls
        clock.advance(1.5)
        await activity.snapshot_async()
        refreshed_calls = hgetall_calls(valkey) - calls
    finally:
        await activity.aclose()
    # The cached read still adds the counts recorded after it.
    assert body["plays"]["random"] == 20
    assert cached_calls == 1
    assert refreshed_calls == 2


async def test_redis_down_reports_this_instance_and_keeps_the_counts(
    pool: Pool, valkey_restartable: ValkeyServer, caplog: pytest.LogCaptureFixture
) -> None:
    server = valkey_restartable
    app = create_app(redis_settings(server), pool=pool)
    activity = app.runtime.activity
    assert isinstance(activity, RedisActivity)
    async with running(app) as client:
        await wait_for_totals(server, {"since": activity.since})
        await client.get("/api/v1/puzzles/random")
        assert await activity.flush()
        await client.get("/api/v1/puzzles/random")
        server.stop()
        with caplog.at_level(logging.INFO, logger="sudokupool"):
            response = await client.get("/api/v2/stats/activity")
            flushed_while_down = await activity.flush()
            await client.get("/api/v1/puzzles/random")
            server.start()
            # The restarted server is empty: it gets what was not flushed before (two plays), not the lost one.
            flushed_after = await activity.flush()
        stored = totals(server)
    assert response.status_code == 200
    body = response.json()
    assert body["scope"] == "instance"
    assert (
        body["covers"]
        == "this worker process since it started: the cluster counters in Redis are unavailable right now"
    )
    assert body["since"] == activity.since
    assert body["plays"]["random"] == 2
    assert flushed_while_down is False
    assert flushed_after is True
    assert stored["random"] == 2
    # The limiter (the v2 request), the counters' read and their flush failed: one line when the outage
    # started, whoever saw it first, and one when it ended.
    lines = [r.getMessage() for r in caplog.records if r.name == "sudokupool.redis"]
    assert len(lines) == 2
    assert lines[0].startswith(f"Redis 127.0.0.1:{server.port} unreachable: rate limiter: ConnectionError")
    assert lines[1].startswith(f"Redis 127.0.0.1:{server.port} is reachable again after ")
    assert "; 3 call(s) failed, " in lines[1]
    # The restarted Redis had lost the counters, and this instance says so.
    assert [r.getMessage()[:50] for r in caplog.records if r.name == "sudokupool.activity.redis"] == [
        "The activity counters in Redis were gone (Redis lo"
    ]


async def test_since_tells_the_truth_after_redis_loses_its_data(
    valkey: ValkeyServer, caplog: pytest.LogCaptureFixture
) -> None:
    activity = RedisActivity.from_url(valkey.url, timeout=2.0, cache_seconds=0.0, now=SINCE)
    try:
        activity.record("random")
        assert await activity.flush()
        before = (await activity.snapshot_async())["since"]
        activity.record("random")
        lost_at = int(time.time())
        valkey.flush()  # Redis loses its data: a restart without persistence, a FLUSHALL, an eviction
        activity.record("by_id")
        with caplog.at_level(logging.WARNING, logger="sudokupool.activity.redis"):
            assert await activity.flush()
        after = await activity.snapshot_async()
    finally:
        await activity.aclose()
    assert before == SINCE
    # Counted from this instance's previous flush (just before the loss), not from the first start.
    assert lost_at - 5 <= after["since"] <= lost_at
    assert totals(valkey)["since"] == after["since"]
    assert after["plays"] == {"random": 1, "by_id": 1, "daily": 0, "total": 2}
    stamp = datetime.fromtimestamp(after["since"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert after["covers"] == f"all instances sharing this Redis, since their shared counters started ({stamp})"
    assert [r.getMessage() for r in caplog.records] == [
        f"The activity counters in Redis were gone (Redis lost its data); they start again from {stamp}."
    ]


async def test_a_redis_cluster_carries_the_limits_and_the_counters(pool: Pool, valkey_cluster: ValkeyCluster) -> None:
    settings = Settings(
        redis_url=valkey_cluster.url,
        redis_mode="cluster",
        redis_timeout=2.0,
        activity_flush_seconds=3600.0,
        sync_interval=0,
        limit_anonymous=3,
    )
    one, two = create_app(settings, pool=pool), create_app(settings, pool=pool)
    async with running(one) as first, running(two) as second:
        statuses = [(await client.get("/api/v2/puzzles/random")).status_code for client in (first, second) * 2]
        assert await one.runtime.activity.flush()
        assert await two.runtime.activity.flush()
        body = (await first.get("/api/v1/stats/activity")).json()
    # One client address, limit 3, across both instances.
    assert statuses == [200, 200, 200, 429]
    assert body["scope"] == "cluster"
    assert body["plays"]["random"] == 3
