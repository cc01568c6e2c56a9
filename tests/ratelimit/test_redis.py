from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import anyio
import pytest

from sudokupool.ratelimit.redis import RedisStore
from sudokupool.ratelimit.store import LimiterUnavailable
from tests.valkey import ValkeyServer

MINUTE = 1_800_000_000 - 1_800_000_000 % 60


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fixed(now: float) -> Callable[[], float]:
    return lambda: now


@pytest.mark.anyio
async def test_counts_in_redis_and_refuses_past_the_limit(valkey: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey.url, timeout=1.0, clock=fixed(MINUTE + 20))
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
    now = [MINUTE + 59.0]
    store = RedisStore.from_url(valkey.url, timeout=1.0, clock=lambda: now[0])
    try:
        first = await store.hit("k", 1)
        refused = await store.hit("k", 1)
        now[0] = MINUTE + 60.0
        next_window = await store.hit("k", 1)
    finally:
        await store.aclose()
    assert (first.allowed, refused.allowed, next_window.allowed) == (True, False, True)


@pytest.mark.anyio
async def test_two_stores_sharing_redis_admit_exactly_the_limit(valkey: ValkeyServer) -> None:
    stores = [RedisStore.from_url(valkey.url, timeout=2.0, clock=fixed(MINUTE + 5)) for _ in range(2)]
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


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.anyio
async def test_open_mode_limits_per_process_while_redis_is_down(caplog: pytest.LogCaptureFixture) -> None:
    store = RedisStore.from_url(f"redis://127.0.0.1:{_unused_port()}/0", timeout=0.5, failure_mode="open")
    try:
        with caplog.at_level(logging.WARNING, logger="sudokupool.ratelimit.redis"):
            decisions = [await store.hit("ip:192.0.2.7", 3) for _ in range(5)]
    finally:
        await store.aclose()
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    # One failure reached Redis; the rest skipped it for the retry interval. Logged once, not per request.
    assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1


@pytest.mark.anyio
async def test_closed_mode_raises_while_redis_is_down() -> None:
    store = RedisStore.from_url(f"redis://127.0.0.1:{_unused_port()}/0", timeout=0.5, failure_mode="closed")
    try:
        with pytest.raises(LimiterUnavailable):
            await store.hit("ip:192.0.2.7", 3)
        with pytest.raises(LimiterUnavailable):
            await store.hit("ip:192.0.2.7", 3)
    finally:
        await store.aclose()


@pytest.mark.anyio
async def test_redis_stopped_mid_run_then_back(valkey_restartable: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey_restartable.url, timeout=0.5, retry_interval=0.0, clock=fixed(MINUTE + 1))
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
