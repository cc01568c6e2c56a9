"""RenderCache: byte-bounded LRU, one render per missing key, failures not cached, renders off the loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import threading
from collections.abc import Callable, Iterator
from functools import partial

import pytest

from sudokupool.images.cache import RenderCache
from sudokupool.images.render import render_png
from tests.helpers import wait_until_async

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"

WAIT = 10.0  # seconds a test waits for another thread before it fails instead of hanging


@pytest.fixture
def executor() -> Iterator[concurrent.futures.ThreadPoolExecutor]:
    with concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="render-test") as pool:
        yield pool


class Renderer:
    """A render callable factory that counts calls per key and can be held until released."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.threads: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def __call__(self, key: str, size: int = 10, *, fail: bool = False) -> Callable[[], bytes]:
        def render() -> bytes:
            self.calls[key] = self.calls.get(key, 0) + 1
            self.threads.append(threading.current_thread().name)
            self.started.set()
            assert self.release.wait(WAIT), "test never released the render"
            if fail:
                raise RuntimeError(f"render of {key} failed")
            return key.encode().ljust(size, b".")

        return render


@pytest.mark.anyio
async def test_miss_then_hit(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(1000, executor=executor)
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
async def test_evicts_least_recently_used_to_stay_within_budget(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(100, executor=executor)
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
async def test_scan_of_many_keys_never_exceeds_budget(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(1000, executor=executor)
    renderer = Renderer()
    for i in range(300):
        await cache.get(i, renderer(str(i), 30 + i % 50))
        assert cache.stats()["bytes"] <= 1000
    assert cache.stats()["entries"] >= 1000 // 80


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("budget", "size"), [pytest.param(0, 5, id="zero-budget"), pytest.param(50, 51, id="value-over-budget")]
)
async def test_value_larger_than_budget_is_returned_not_stored(
    executor: concurrent.futures.Executor, budget: int, size: int
) -> None:
    cache = RenderCache(budget, executor=executor)
    renderer = Renderer()
    assert len(await cache.get("big", renderer("big", size))) == size
    assert len(await cache.get("big", renderer("big", size))) == size
    assert renderer.calls == {"big": 2}
    assert cache.stats()["entries"] == 0
    assert cache.stats()["bytes"] == 0


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="budget_bytes"):
        RenderCache(-1)


@pytest.mark.anyio
async def test_concurrent_gets_for_one_missing_key_share_one_render(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(1000, executor=executor)
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
async def test_failed_render_reaches_every_waiter_and_is_not_cached(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(1000, executor=executor)
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
async def test_render_runs_in_the_given_executor_not_on_the_event_loop(
    executor: concurrent.futures.Executor,
) -> None:
    cache = RenderCache(1000, executor=executor)
    loop_thread = threading.current_thread().name
    seen: list[str] = []

    def render() -> bytes:
        seen.append(threading.current_thread().name)
        return b"x"

    await cache.get("k", render)
    assert len(seen) == 1
    assert seen[0] != loop_thread
    assert seen[0].startswith("render-test")


@pytest.mark.anyio
async def test_default_executor_is_a_worker_thread() -> None:
    cache = RenderCache(1000)
    loop_ident = threading.get_ident()
    idents: list[int] = []

    def render() -> bytes:
        idents.append(threading.get_ident())
        return b"x"

    await cache.get("k", render)
    assert idents
    assert idents[0] != loop_ident


@pytest.mark.anyio
async def test_event_loop_keeps_running_while_a_render_blocks(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(1000, executor=executor)
    renderer = Renderer()
    renderer.release.clear()
    task = asyncio.create_task(cache.get("slow", renderer("slow")))
    assert await asyncio.to_thread(renderer.started.wait, WAIT)
    # The loop still serves other requests, here another key's render, while that render is held.
    other = Renderer()
    assert await cache.get("fast", other("fast")) == b"fast......"
    assert await cache.get("fast", other("fast")) == b"fast......"
    assert other.calls == {"fast": 1}
    assert not task.done()
    renderer.release.set()
    assert await task == b"slow......"


@pytest.mark.anyio
async def test_cancelled_waiter_does_not_cancel_the_shared_render(executor: concurrent.futures.Executor) -> None:
    cache = RenderCache(1000, executor=executor)
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


@pytest.mark.anyio
async def test_works_with_a_process_pool_and_the_real_renderer() -> None:
    # The PNG encoder holds the GIL, so a process pool is the way to render on several cores at once;
    # a functools.partial of render_png pickles, which is all a process pool needs.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        cache = RenderCache(1_000_000, executor=pool)
        render = partial(render_png, PUZZLE, SOLUTION, "solution")
        results = await asyncio.gather(*(cache.get("k", render) for _ in range(3)))
    assert results == [render_png(PUZZLE, SOLUTION, "solution")] * 3
    assert cache.stats()["renders"] == 1
