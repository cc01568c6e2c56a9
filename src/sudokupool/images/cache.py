"""A bounded, single-flight LRU of rendered bytes whose renders run off the event loop.

One cache lives on one event loop (the app's). Callers ask for a key with a zero-argument
``render`` callable; on a miss the render runs in an executor thread, and every caller that asks
for the same key meanwhile awaits that same render instead of starting its own. Finished results
go into an LRU bounded by the total length of the stored byte strings; a failed render is not
stored, so the next request tries again.

Pillow holds the GIL while it encodes a PNG, so renders in a thread pool keep the event loop
responsive (it gets the GIL back at least every switch interval, 5 ms) but do not add up across
cores. For that, pass a ``ProcessPoolExecutor`` and a picklable render such as
``functools.partial(render_png, puzzle, solution, variant)``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial


@dataclass
class CacheTally:
    """Lookups that found their bytes, lookups that did not, and renders started; may outlive a cache."""

    hits: int = 0
    misses: int = 0
    renders: int = 0


class RenderCache:
    """Rendered bytes by key: LRU bounded by ``budget_bytes``, one render per missing key at a time.

    ``budget_bytes`` counts the payload bytes of the stored values (the per-entry bookkeeping, a few
    hundred bytes, is not counted). A value larger than the whole budget is returned but not stored;
    a budget of 0 disables storing. ``executor`` runs the renders; ``None`` means the event loop's
    default thread pool. ``tally`` counts hits, misses and renders (pass one to keep counting across
    caches). Not thread-safe: use one instance from one event loop.
    """

    def __init__(
        self,
        budget_bytes: int,
        *,
        executor: concurrent.futures.Executor | None = None,
        tally: CacheTally | None = None,
    ) -> None:
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes must be >= 0, got {budget_bytes}")
        self._budget = budget_bytes
        self._executor = executor
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self._inflight: dict[Hashable, asyncio.Future[bytes]] = {}
        self.tally = tally if tally is not None else CacheTally()

    async def get(self, key: Hashable, render: Callable[[], bytes]) -> bytes:
        """Return the bytes for ``key``, calling ``render`` in the executor if they are not cached.

        Concurrent calls for the same missing key share one call of ``render``. If it raises, every
        caller waiting on it gets that exception and nothing is cached. Cancelling a caller does not
        cancel the render the others wait on (it still completes and is cached).
        """
        data = self._entries.get(key)
        if data is not None:
            self._entries.move_to_end(key)
            self.tally.hits += 1
            return data
        self.tally.misses += 1
        future = self._inflight.get(key)
        if future is None:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._executor, render)
            self.tally.renders += 1
            self._inflight[key] = future
            future.add_done_callback(partial(self._settle, key))
        # shield: one waiter's cancellation (a client that went away) must not cancel the shared render.
        return await asyncio.shield(future)

    def _settle(self, key: Hashable, future: asyncio.Future[bytes]) -> None:
        del self._inflight[key]
        # Reading the exception also marks it retrieved, so a failure nobody awaited any more is not logged
        # as "never retrieved"; the waiters that remain get it through their shield.
        if future.cancelled() or future.exception() is not None:
            return
        self._store(key, future.result())

    def _store(self, key: Hashable, data: bytes) -> None:
        size = len(data)
        if size > self._budget:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= len(old)
        self._entries[key] = data
        self._bytes += size
        while self._bytes > self._budget:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= len(evicted)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def stats(self) -> dict[str, int]:
        """Counters: ``entries``, ``bytes`` (stored payload), ``budget_bytes``, ``hits``, ``misses``,
        ``renders`` (renders started; misses that joined one in flight count as misses only; these three
        from the tally) and ``inflight`` (renders running now)."""
        return {
            "entries": len(self._entries),
            "bytes": self._bytes,
            "budget_bytes": self._budget,
            "hits": self.tally.hits,
            "misses": self.tally.misses,
            "renders": self.tally.renders,
            "inflight": len(self._inflight),
        }
