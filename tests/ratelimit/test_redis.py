from __future__ import annotations

import asyncio
import logging
import socket

import anyio
import pytest

from sudokupool.ratelimit.redis import RedisStore
from sudokupool.ratelimit.store import LimiterUnavailable
from sudokupool.ratelimit.window import Decision
from tests.helpers import MINUTE, FakeClock, free_port
from tests.valkey import ValkeyCluster, ValkeyServer


@pytest.mark.anyio
async def test_counts_in_redis_and_refuses_past_the_limit(valkey: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey.url, timeout=1.0, clock=FakeClock(MINUTE + 20))
    try:
        decisions = [await store.hit("ip:192.0.2.1", 2) for _ in range(3)]
        ttl = await store._client.ttl(f"sudokupool:rl:{MINUTE // 60}:ip:192.0.2.1")
    finally:
        await store.aclose()
    assert [d.allowed for d in decisions] == [True, True, False]
    assert [d.remaining for d in decisions] == [1, 0, 0]
    assert decisions[-1].retry_after == 40
    assert 0 < ttl <= 120


@pytest.mark.anyio
async def test_each_window_has_its_own_counter(valkey: ValkeyServer) -> None:
    clock = FakeClock(MINUTE + 59.0)
    store = RedisStore.from_url(valkey.url, timeout=1.0, clock=clock)
    try:
        first = await store.hit("k", 1)
        refused = await store.hit("k", 1)
        clock.now = MINUTE + 60.0
        next_window = await store.hit("k", 1)
    finally:
        await store.aclose()
    assert (first.allowed, refused.allowed, next_window.allowed) == (True, False, True)


@pytest.mark.anyio
async def test_two_stores_sharing_redis_admit_exactly_the_limit(valkey: ValkeyServer) -> None:
    stores = [RedisStore.from_url(valkey.url, timeout=2.0, clock=FakeClock(MINUTE + 5)) for _ in range(2)]
    allowed: list[bool] = []

    async def one(store: RedisStore) -> None:
        allowed.append((await store.hit("ip:198.51.100.9", 60)).allowed)

    try:
        async with anyio.create_task_group() as tasks:
            for n in range(200):
                tasks.start_soon(one, stores[n % 2])
    finally:
        for store in stores:
            await store.aclose()
    assert len(allowed) == 200
    assert allowed.count(True) == 60
    # The requests that arrived together went to Redis together: a round trip or two per store, not 100.
    assert sum(store.calls for store in stores) <= 4


@pytest.mark.anyio
async def test_open_mode_limits_per_process_while_redis_is_down(caplog: pytest.LogCaptureFixture) -> None:
    store = RedisStore.from_url(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5, failure_mode="open")
    try:
        with caplog.at_level(logging.WARNING, logger="sudokupool.ratelimit.redis"):
            decisions = [await store.hit("ip:192.0.2.7", 3) for _ in range(5)]
    finally:
        await store.aclose()
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    # One failure reached Redis; the rest skipped it for the retry interval. Logged once, not per request.
    assert len([r for r in caplog.records if " unreachable: " in r.getMessage()]) == 1


@pytest.mark.anyio
async def test_closed_mode_raises_while_redis_is_down() -> None:
    store = RedisStore.from_url(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5, failure_mode="closed")
    try:
        with pytest.raises(LimiterUnavailable):
            await store.hit("ip:192.0.2.7", 3)
        with pytest.raises(LimiterUnavailable):
            await store.hit("ip:192.0.2.7", 3)
    finally:
        await store.aclose()


@pytest.mark.anyio
async def test_redis_stopped_mid_run_then_back(valkey_restartable: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey_restartable.url, timeout=0.5, retry_interval=0.0, clock=FakeClock(MINUTE + 1))
    try:
        assert (await store.hit("k", 10)).remaining == 9
        valkey_restartable.stop()
        during = await store.hit("k", 10)
        valkey_restartable.start()
        after = await store.hit("k", 10)
    finally:
        await store.aclose()
    # Served from the process-local fallback while down; back on the (restarted, empty) Redis after.
    assert during.allowed
    assert during.remaining == 9
    assert after.allowed
    assert after.remaining == 9


@pytest.mark.anyio
async def test_a_slow_redis_cannot_hold_a_request_past_the_timeout() -> None:
    # A listener that accepts connections and never answers: the socket timeout must end the call.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        port = server.getsockname()[1]
        store = RedisStore.from_url(f"redis://127.0.0.1:{port}/0", timeout=0.2, failure_mode="open")
        try:
            with anyio.fail_after(5):
                decision = await store.hit("k", 5)
        finally:
            await store.aclose()
    assert decision.allowed


@pytest.mark.anyio
async def test_hits_waiting_together_go_in_one_round_trip_and_are_counted_exactly(valkey: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey.url, timeout=2.0, clock=FakeClock(MINUTE + 3))
    identities = [f"ip:192.0.2.{n % 10}" for n in range(100)]
    try:
        decisions = await asyncio.gather(*(store.hit(identity, 5) for identity in identities))
        stored = await store._client.get(f"sudokupool:rl:{MINUTE // 60}:ip:192.0.2.3")
    finally:
        await store.aclose()
    assert store.calls == 1
    for n in range(10):
        mine = [d for identity, d in zip(identities, decisions, strict=True) if identity == f"ip:192.0.2.{n}"]
        assert sorted(d.remaining for d in mine if d.allowed) == [0, 1, 2, 3, 4]
        assert len([d for d in mine if not d.allowed]) == 5
    assert int(stored) == 10


@pytest.mark.anyio
async def test_a_refused_identity_is_answered_locally_until_the_window_ends(valkey: ValkeyServer) -> None:
    clock = FakeClock(MINUTE + 10.0)
    store = RedisStore.from_url(valkey.url, timeout=2.0, clock=clock)
    key = f"sudokupool:rl:{MINUTE // 60}:k"
    try:
        first, refused = await store.hit("k", 1), await store.hit("k", 1)
        later = [await store.hit("k", 1) for _ in range(5)]
        other = await store.hit("other", 1)
        calls_in_window = store.calls
        stored = int(await store._client.get(key))
        clock.now = MINUTE + 60.0
        next_window = await store.hit("k", 1)
    finally:
        await store.aclose()
    assert (first.allowed, refused.allowed) == (True, False)
    assert [d.allowed for d in later] == [False] * 5
    assert [d.retry_after for d in later] == [50] * 5
    assert other.allowed
    # Two calls for "k" and one for "other": the five later refusals asked nobody.
    assert calls_in_window == 3
    assert stored == 2
    assert next_window.allowed
    assert store.calls == 4


@pytest.mark.anyio
async def test_a_script_flushed_from_redis_is_loaded_again(valkey: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey.url, timeout=2.0, clock=FakeClock(MINUTE + 1))
    try:
        assert (await store.hit("k", 10)).remaining == 9
        await store._client.script_flush()
        assert (await store.hit("k", 10)).remaining == 8
    finally:
        await store.aclose()


@pytest.mark.anyio
async def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(
    valkey_restartable: ValkeyServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore.from_url(valkey_restartable.url, timeout=0.5, retry_interval=0.0, clock=FakeClock(MINUTE + 1))
    try:
        with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
            await store.hit("k", 10)
            valkey_restartable.stop()
            during = [await store.hit("k", 10) for _ in range(3)]
            after_failures = len(caplog.records)
            valkey_restartable.start()
            after = [await store.hit("k", 10) for _ in range(3)]
    finally:
        await store.aclose()
    assert [d.allowed for d in during + after] == [True] * 6
    assert after_failures == 1
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0].startswith(f"Redis 127.0.0.1:{valkey_restartable.port} unreachable: rate limiter: ConnectionError")
    assert lines[0].endswith(
        "; the rate limiter answers per its failure mode and the activity counters count per worker process"
    )
    assert lines[1].startswith(f"Redis 127.0.0.1:{valkey_restartable.port} is reachable again after ")
    assert lines[1].endswith(" s; 3 call(s) failed, 3 request(s) answered without it meanwhile")
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.INFO]


@pytest.mark.anyio
async def test_a_cluster_counts_exactly_across_two_stores(valkey_cluster: ValkeyCluster) -> None:
    stores = [
        RedisStore.from_url(valkey_cluster.url, timeout=2.0, mode="cluster", clock=FakeClock(MINUTE + 5))
        for _ in range(2)
    ]
    identities = [f"ip:198.51.100.{n}" for n in range(10)]
    allowed: dict[str, int] = dict.fromkeys(identities, 0)

    async def one(store: RedisStore, identity: str) -> None:
        decision = await store.hit(identity, 7)
        allowed[identity] += decision.allowed

    try:
        async with anyio.create_task_group() as tasks:
            for n in range(200):
                tasks.start_soon(one, stores[n % 2], identities[n % 10])
    finally:
        for store in stores:
            await store.aclose()
    assert allowed == dict.fromkeys(identities, 7)
    # The counters spread over the nodes by identity.
    assert len({valkey_cluster.node_of(f"sudokupool:rl:{MINUTE // 60}:{i}").port for i in identities}) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("mode", [pytest.param("open", id="open"), pytest.param("closed", id="closed")])
async def test_a_cluster_node_failing_affects_only_its_identities(
    valkey_cluster: ValkeyCluster, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = valkey_cluster
    window = MINUTE // 60
    store = RedisStore.from_url(
        cluster.url, timeout=0.5, mode="cluster", failure_mode=mode, retry_interval=0.0, clock=FakeClock(MINUTE + 1)
    )
    identities = [f"ip:203.0.113.{n}" for n in range(12)]
    victim = cluster.nodes[1]
    lost = {i for i in identities if cluster.node_of(f"sudokupool:rl:{window}:{i}") is victim}

    async def round_of_hits() -> dict[str, Decision | Exception]:
        results = await asyncio.gather(*(store.hit(i, 5) for i in identities), return_exceptions=True)
        return {i: r for i, r in zip(identities, results, strict=True) if isinstance(r, Decision | Exception)}

    try:
        with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
            await round_of_hits()
            victim.stop()
            during = await round_of_hits()
            victim.start()
            cluster.wait_until_ok()
            after = await round_of_hits()
    finally:
        await store.aclose()
        if victim.process is None:  # the session's cluster whole again for the next test
            victim.start()
            cluster.wait_until_ok()
    assert 0 < len(lost) < len(identities)
    for identity in identities:
        if identity not in lost:
            assert isinstance(during[identity], Decision)
            assert (during[identity].remaining, after[identity].remaining) == (3, 2)
        elif mode == "closed":
            assert isinstance(during[identity], LimiterUnavailable)
        else:
            # Counted in process meanwhile: the first hit this process did not count before.
            assert isinstance(during[identity], Decision)
            assert during[identity].remaining == 4
    for identity in lost:
        # The node came back empty (no persistence): its counters start again.
        assert after[identity].remaining == 4
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0].startswith(f"Redis 127.0.0.1:{victim.port} unreachable: rate limiter: ")
    assert lines[1].startswith(f"Redis 127.0.0.1:{victim.port} is reachable again after ")


@pytest.mark.anyio
async def test_a_request_that_costs_more_counts_as_that_many(valkey: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey.url, timeout=1.0, clock=FakeClock(MINUTE + 20))
    try:
        decisions = [await store.hit("ip:192.0.2.9", 10, cost) for cost in (5, 1, 5)]
        # Another identity's hits in the same batch are not counted against it.
        together = await asyncio.gather(store.hit("ip:192.0.2.10", 10, 5), store.hit("ip:192.0.2.11", 10, 1))
    finally:
        await store.aclose()
    assert [(d.allowed, d.remaining) for d in decisions] == [(True, 5), (True, 4), (False, 0)]
    assert [d.remaining for d in together] == [5, 9]
