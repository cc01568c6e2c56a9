"""A bounded, single-flight LRU of computed bytes (rendered images), whose misses are computed elsewhere.

One cache lives on one event loop (the app's). Callers ask for a key with ``produce``, a zero-argument
coroutine function that computes the bytes (in the app: a job of the :class:`~sudokupool.work.WorkPool`); on a
miss it is awaited, and every caller that asks for the same key meanwhile awaits that same call instead of
starting its own. Finished results go into an LRU bounded by the total length of the stored byte strings; a
failed call is not stored, so the next request tries again. A call dropped because the client that started
it left (:class:`~sudokupool.work.WorkDropped`) is started again by the next caller still waiting, with its
own ``produce``.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from functools import partial

from sudokupool.work.errors import WorkDropped


@dataclass
class CacheTally:
    """Lookups that found their bytes, lookups that did not, and renders started; may outlive a cache."""

    hits: int = 0
    misses: int = 0
    renders: int = 0


class ResultCache:
    """Computed bytes by key: LRU bounded by ``budget_bytes``, one computation per missing key at a time.

    ``budget_bytes`` counts the payload bytes of the stored values (the per-entry bookkeeping, a few
    hundred bytes, is not counted). A value larger than the whole budget is returned but not stored;
    a budget of 0 disables storing. ``tally`` counts hits, misses and renders (pass one to keep counting
    across caches). Not thread-safe: use one instance from one event loop.
    """

    def __init__(
        self,
        budget_bytes: int,
        *,
        tally: CacheTally | None = None,
    ) -> None:
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes must be >= 0, got {budget_bytes}")
        self._budget = budget_bytes
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self._inflight: dict[Hashable, asyncio.Future[bytes]] = {}
        self.tally = tally if tally is not None else CacheTally()

    async def get(self, key: Hashable, produce: Callable[[], Awaitable[bytes]]) -> bytes:
        """Return the bytes for ``key``, awaiting ``produce()`` for them if they are not cached.

        Concurrent calls for the same missing key share one call of ``produce``. If it raises, every
        caller waiting on it gets that exception and nothing is cached, except :class:`WorkDropped`: the
        caller that started it left, and a caller still waiting starts it again. Cancelling a caller does
        not cancel the call the others wait on (it still completes and is cached).
        """
        data = self._entries.get(key)
        if data is not None:
            self._entries.move_to_end(key)
            self.tally.hits += 1
            return data
        self.tally.misses += 1
        while True:
            future = self._inflight.get(key)
            mine = future is None or future.done()
            if future is None or future.done():
                future = asyncio.ensure_future(produce())
                self.tally.renders += 1
                self._inflight[key] = future
                future.add_done_callback(partial(self._settle, key))
            try:
                # shield: one waiter's cancellation (a client that went away) must not cancel the shared call.
                return await asyncio.shield(future)
            except WorkDropped:
                if mine:
                    raise

    def put(self, key: Hashable, data: bytes) -> None:
        """Keep ``data``, made in the loop for ``key`` (a lookup's answer: there is no call to share), as
        :meth:`get` keeps what its ``produce`` returns, counted as its miss and its render."""
        self.tally.misses += 1
        self.tally.renders += 1
        self._store(key, data)

    def _settle(self, key: Hashable, future: asyncio.Future[bytes]) -> None:
        # Reading the exception also marks it retrieved, so a failure nobody awaited any more is not logged
        # as "never retrieved"; the waiters that remain get it through their shield.
        if self._inflight.get(key) is future:
            del self._inflight[key]
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

    def covers(self, key: Hashable) -> bool:
        """Whether ``key``'s bytes are cached or being computed now (a caller would start nothing)."""
        return key in self._entries or key in self._inflight

    def stats(self) -> dict[str, int]:
        """Counters: ``entries``, ``bytes`` (stored payload), ``budget_bytes``, ``hits``, ``misses``,
        ``renders`` (computations started; misses that joined one in flight count as misses only; these three
        from the tally) and ``inflight`` (computations running now)."""
        return {
            "entries": len(self._entries),
            "bytes": self._bytes,
            "budget_bytes": self._budget,
            "hits": self.tally.hits,
            "misses": self.tally.misses,
            "renders": self.tally.renders,
            "inflight": len(self._inflight),
        }
