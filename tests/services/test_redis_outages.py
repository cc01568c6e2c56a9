"""Redis outages against a real Valkey: an outage ends when the server answers (probed, not waiting for
traffic), a server restart costs no request its shared count, and single mode against a cluster node is
one line naming the setting, not an outage that flaps."""

from __future__ import annotations

import asyncio
import logging
import signal
import time

import pytest

from sudokupool.activity.redis import RedisActivity
from sudokupool.ratelimit.redis import RedisStore
from sudokupool.services.outages import redis_outages
from sudokupool.services.redisclient import pinger
from tests.helpers import MINUTE, FakeClock
from tests.valkey import ValkeyCluster, ValkeyServer

pytestmark = pytest.mark.anyio

WINDOW = MINUTE // 60


def messages(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sudokupool.redis"]


def identity_on(cluster: ValkeyCluster, node: ValkeyServer) -> str:
    """A client identity whose counter, in this test's window, lives on ``node``."""
    return next(
        identity
        for identity in (f"ip:198.51.100.{n}" for n in range(256))
        if cluster.node_of(f"sudokupool:rl:{WINDOW}:{identity}") is node
    )


async def test_a_paused_cluster_node_is_back_as_soon_as_it_answers_without_a_request_for_it(
    valkey_cluster: ValkeyCluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = valkey_cluster
    victim = cluster.nodes[1]
    name = f"127.0.0.1:{victim.port}"
    outages = redis_outages(probe=pinger(cluster.url, timeout=0.25, mode="cluster"), probe_interval=0.1)
    store = RedisStore.from_url(
        cluster.url, timeout=0.25, mode="cluster", retry_interval=0.0, clock=FakeClock(MINUTE + 1), outages=outages
    )
    identity = identity_on(cluster, victim)
    assert victim.process is not None
    try:
        with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
            assert (await store.hit(identity, 5)).remaining == 4
            paused = time.monotonic()
            victim.process.send_signal(signal.SIGSTOP)
            try:
                during = await store.hit(identity, 5)  # times out: the node's outage starts
                assert outages.states()[name] is True
                await asyncio.sleep(max(0.0, 1.5 - (time.monotonic() - paused)))
            finally:
                victim.process.send_signal(signal.SIGCONT)
            answering = time.monotonic()
            calls = store.calls
            # No request from here on: only the probe can tell that the node is back.
            while outages.states()[name] and time.monotonic() - answering < 10:  # noqa: ASYNC110 - no event to wait on
                await asyncio.sleep(0.05)
            back_after = time.monotonic() - answering
            assert store.calls == calls
    finally:
        await store.aclose()
    assert during.allowed and during.remaining == 4  # counted in process meanwhile (failure mode open)
    assert outages.states()[name] is False, f"still down {back_after:.1f} s after the node answered"
    assert not outages.down
    lines = messages(caplog)
    assert [level for level, _ in lines] == ["WARNING", "INFO"]
    assert lines[0][1].startswith(f"Redis {name} unreachable: rate limiter: TimeoutError")
    assert lines[1][1].startswith(f"Redis {name} is reachable again after ")


async def test_a_server_restart_costs_no_request_its_shared_count(
    valkey_restartable: ValkeyServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore.from_url(valkey_restartable.url, timeout=0.5, retry_interval=0.0, clock=FakeClock(MINUTE + 1))
    activity = RedisActivity.from_url(valkey_restartable.url, timeout=0.5, cache_seconds=0.0)
    try:
        with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
            assert (await store.hit("ip:192.0.2.1", 10)).remaining == 9
            activity.record("random")
            assert await activity.flush()
            # Restarted between two requests: the connections held from before are dead.
            valkey_restartable.stop()
            valkey_restartable.start()
            after = [await store.hit("ip:192.0.2.1", 10) for _ in range(3)]
            activity.record("random")
            flushed = await activity.flush()
            snapshot = await activity.snapshot_async()
    finally:
        await store.aclose()
        await activity.aclose()
    assert store.fallbacks == 0
    # Counted in the restarted (empty) Redis, not in process memory.
    assert [decision.remaining for decision in after] == [9, 8, 7]
    assert flushed
    assert snapshot["scope"] == "cluster"
    assert messages(caplog) == []


async def test_a_cluster_node_restart_costs_no_request_its_shared_count(
    valkey_cluster: ValkeyCluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = valkey_cluster
    store = RedisStore.from_url(
        cluster.url, timeout=0.5, mode="cluster", retry_interval=0.0, clock=FakeClock(MINUTE + 1)
    )
    identities = [identity_on(cluster, node) for node in cluster.nodes]
    victim = cluster.nodes[2]
    try:
        with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
            for identity in identities:
                assert (await store.hit(identity, 10)).remaining == 9
            victim.stop()
            victim.start()
            cluster.wait_until_ok()
            after = {identity: await store.hit(identity, 10) for identity in identities}
    finally:
        await store.aclose()
        if victim.process is None:
            victim.start()
            cluster.wait_until_ok()
    assert store.fallbacks == 0
    # The restarted node came back empty (no persistence); the others kept their counts.
    assert [after[identity].remaining for identity in identities] == [8, 8, 9]
    assert messages(caplog) == []


async def test_single_mode_against_a_cluster_node_is_one_line_naming_the_setting(
    valkey_cluster: ValkeyCluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = valkey_cluster
    outages = redis_outages()
    # The URL of a cluster node, in single mode (the default).
    store = RedisStore.from_url(
        cluster.url, timeout=0.5, retry_interval=0.0, clock=FakeClock(MINUTE + 1), outages=outages
    )
    elsewhere = [identity_on(cluster, node) for node in cluster.nodes[1:]]
    here = identity_on(cluster, cluster.nodes[0])
    activity = RedisActivity.from_url(cluster.url, timeout=0.5, cache_seconds=0.0, outages=outages)
    try:
        with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
            for _ in range(5):
                for identity in elsewhere:  # one key a batch, on another node: MOVED
                    await store.hit(identity, 100)
                await store.hit(here, 100)  # on the node asked: counted
                # Several keys in one script call: CROSSSLOT.
                await asyncio.gather(*(store.hit(identity, 100) for identity in [here, *elsewhere]))
                activity.record("random")
                await activity.flush()
                await activity.snapshot_async()
            down = outages.down
    finally:
        await store.aclose()
        await activity.aclose()
    lines = messages(caplog)
    assert len(lines) == 1, lines
    level, text = lines[0]
    assert level == "ERROR"
    assert f"Redis 127.0.0.1:{cluster.nodes[0].port} is a node of a Redis Cluster" in text
    assert "set SUDOKUPOOL_REDIS_MODE=cluster" in text
    assert not down
