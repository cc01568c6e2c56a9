"""ResultCache: byte-bounded LRU, one computation per missing key, failures not cached, a dropped
computation started again by a caller still waiting."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Callable

import pytest

from sudokupool.images.render import render_png
from sudokupool.work import WorkDropped, WorkPool
from sudokupool.work.cache import ResultCache
from tests.helpers import wait_until_async

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"

WAIT = 10.0  # seconds a test waits for a computation before it fails instead of hanging


class Renderer:
    """A producer factory that counts calls per key and can be held until released."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    def __call__(
        self, key: str, size: int = 10, *, fail: bool = False, drop: bool = False
    ) -> Callable[[], Awaitable[bytes]]:
        async def produce() -> bytes:
            self.calls[key] = self.calls.get(key, 0) + 1
            self.started.set()
            await asyncio.wait_for(self.release.wait(), WAIT)
            if drop:
                raise WorkDropped("the client left")
            if fail:
                raise RuntimeError(f"render of {key} failed")
            return key.encode().ljust(size, b".")

        return produce


@pytest.mark.anyio
async def test_miss_then_hit() -> None:
    cache = ResultCache(1000)
    renderer = Renderer()
    first = await cache.get(("pool", 1, "puzzle"), renderer("a"))
    second = await cache.get(("pool", 1, "puzzle"), renderer("a"))
    assert first == second == b"a........."
    assert renderer.calls == {"a": 1}
    assert cache.stats() == {
        "entries": 1,
        "bytes": 10,
        "budget_bytes": 1000,
        "hits": 1,
        "misses": 1,
        "renders": 1,
        "inflight": 0,
    }


@pytest.mark.anyio
async def test_evicts_least_recently_used_to_stay_within_budget() -> None:
    cache = ResultCache(100)
    renderer = Renderer()
    await cache.get("a", renderer("a", 40))
    await cache.get("b", renderer("b", 40))
    await cache.get("a", renderer("a", 40))  # a is now more recent than b
    await cache.get("c", renderer("c", 40))  # 120 bytes > 100: the least recent, b, goes
    assert "a" in cache
    assert "b" not in cache
    assert "c" in cache
    assert cache.stats()["bytes"] == 80
    await cache.get("d", renderer("d", 90))  # needs both a and c gone
    assert len(cache) == 1
    assert "d" in cache
    assert cache.stats()["bytes"] == 90
    await cache.get("b", renderer("b", 40))
    assert renderer.calls == {"a": 1, "b": 2, "c": 1, "d": 1}


@pytest.mark.anyio
async def test_scan_of_many_keys_never_exceeds_budget() -> None:
    cache = ResultCache(1000)
    renderer = Renderer()
    for i in range(300):
        await cache.get(i, renderer(str(i), 30 + i % 50))
        assert cache.stats()["bytes"] <= 1000
    assert cache.stats()["entries"] >= 1000 // 80


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("budget", "size"), [pytest.param(0, 5, id="zero-budget"), pytest.param(50, 51, id="value-over-budget")]
)
async def test_value_larger_than_budget_is_returned_not_stored(budget: int, size: int) -> None:
    cache = ResultCache(budget)
    renderer = Renderer()
    assert len(await cache.get("big", renderer("big", size))) == size
    assert len(await cache.get("big", renderer("big", size))) == size
    assert renderer.calls == {"big": 2}
    assert cache.stats()["entries"] == 0
    assert cache.stats()["bytes"] == 0


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="budget_bytes"):
        ResultCache(-1)


@pytest.mark.anyio
async def test_concurrent_gets_for_one_missing_key_share_one_computation() -> None:
    cache = ResultCache(1000)
    renderer = Renderer()
    renderer.release.clear()
    tasks = [asyncio.create_task(cache.get("k", renderer("k"))) for _ in range(50)]
    await wait_until_async(lambda: cache.stats()["misses"] == 50, "50 misses", seconds=WAIT)
    assert cache.stats()["inflight"] == 1
    renderer.release.set()
    results = await asyncio.gather(*tasks)
    assert results == [b"k........."] * 50
    assert renderer.calls == {"k": 1}
    assert cache.stats()["renders"] == 1
    assert cache.stats()["inflight"] == 0


@pytest.mark.anyio
async def test_failed_computation_reaches_every_waiter_and_is_not_cached() -> None:
    cache = ResultCache(1000)
    renderer = Renderer()
    renderer.release.clear()
    tasks = [asyncio.create_task(cache.get("k", renderer("k", fail=True))) for _ in range(5)]
    await wait_until_async(lambda: cache.stats()["misses"] == 5, "5 misses", seconds=WAIT)
    renderer.release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, RuntimeError) and str(r) == "render of k failed" for r in results)
    assert renderer.calls == {"k": 1}
    assert "k" not in cache
    assert cache.stats()["inflight"] == 0
    # The next request renders again, and a success is then cached.
    assert await cache.get("k", renderer("k")) == b"k........."
    assert renderer.calls == {"k": 2}
    assert "k" in cache


@pytest.mark.anyio
async def test_a_computation_dropped_for_the_caller_that_left_is_started_again_for_one_that_waits() -> None:
    cache = ResultCache(1000)
    renderer = Renderer()
    renderer.release.clear()
    leader = asyncio.create_task(cache.get("k", renderer("k", drop=True)))
    follower = asyncio.create_task(cache.get("k", renderer("k")))
    await wait_until_async(lambda: cache.stats()["misses"] == 2, "2 misses", seconds=WAIT)
    renderer.release.set()
    with pytest.raises(WorkDropped):
        await leader
    assert await follower == b"k........."
    assert renderer.calls == {"k": 2}
    assert "k" in cache


@pytest.mark.anyio
async def test_cancelled_waiter_does_not_cancel_the_shared_computation() -> None:
    cache = ResultCache(1000)
    renderer = Renderer()
    renderer.release.clear()
    leader = asyncio.create_task(cache.get("k", renderer("k")))
    follower = asyncio.create_task(cache.get("k", renderer("k")))
    await wait_until_async(lambda: cache.stats()["misses"] == 2, "2 misses", seconds=WAIT)
    leader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leader
    renderer.release.set()
    assert await follower == b"k........."
    assert renderer.calls == {"k": 1}
    assert "k" in cache


@pytest.mark.slow
@pytest.mark.anyio
async def test_works_with_the_work_pool_and_the_real_renderer() -> None:
    pool = WorkPool(processes=1, queue=4)
    try:
        cache = ResultCache(1_000_000)
        results = await asyncio.gather(
            *(cache.get("k", lambda: pool.submit(render_png, PUZZLE, SOLUTION, "solution")) for _ in range(3))
        )
        assert await pool.submit(operator.add, 1, 1) == 2
    finally:
        await pool.aclose()
    assert results == [render_png(PUZZLE, SOLUTION, "solution")] * 3
    assert cache.stats()["renders"] == 1


@pytest.mark.anyio
async def test_bytes_made_in_the_loop_are_kept_as_a_computation_s_and_counted_as_one() -> None:
    cache = ResultCache(10)
    cache.put("a", b"12345")
    assert "a" in cache and cache.covers("a")
    assert (cache.tally.misses, cache.tally.renders) == (1, 1)

    async def never() -> bytes:
        raise AssertionError("computed again")

    assert await cache.get("a", never) == b"12345"
    assert cache.tally.hits == 1
    # The byte bound holds as for computed bytes: a second put evicts the least recently used.
    cache.put("b", b"678901")
    assert "a" not in cache and "b" in cache
    cache.put("c", b"x" * 11)
    assert "c" not in cache
