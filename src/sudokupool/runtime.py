"""The app's live state: the current pool (swapped whole on reload), the store, counters and caches."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import orjson

from sudokupool.activity import Activity
from sudokupool.config import Settings
from sudokupool.memory import release_free_memory
from sudokupool.pool import Pool
from sudokupool.rendercache import CacheTally, RenderCache
from sudokupool.storage.base import ExportListing, ExportStore


@dataclass
class SyncStatus:
    """What the last look for a newer export found (for ``health``)."""

    last_attempt_at: int | None = None
    last_success_at: int | None = None
    last_error: str | None = None
    last_error_at: int | None = None
    #: The served pool came from ``fallback_exports`` because the primary source was unreachable at startup.
    fallback: bool = False
    #: Counts since the process started (for the metrics): looks for a newer export (the startup load is
    #: one), the looks that ended well or failed, and the exports refused for what they contain.
    attempts: int = 0
    successes: int = 0
    failures: int = 0
    refusals: int = 0


class Runtime:
    """Everything a handler reads. ``pool`` is replaced as one reference; a Pool is never mutated."""

    def __init__(self, settings: Settings, *, pool: Pool | None = None, store: ExportStore | None = None) -> None:
        self.settings = settings
        self.pool: Pool | None = pool
        self.store = store
        self.activity = Activity()
        # Rendered PNGs of the current pool; emptied on every swap, so a new export never serves a stale image.
        # Its hits, misses and renders add up across swaps in one tally.
        self.image_tally = CacheTally()
        self.images = RenderCache(settings.image_cache_bytes, tally=self.image_tally)
        self.sync = SyncStatus()
        self._listing: tuple[float, bytes] | None = None
        self._listing_lock = asyncio.Lock()

    def swap(self, pool: Pool) -> None:
        """Make ``pool`` the one every following request sees."""
        self.pool = pool
        self._listing = None
        self.images = RenderCache(self.settings.image_cache_bytes, tally=self.image_tally)

    async def install(self, pool: Pool) -> None:
        """:meth:`swap` in ``pool``, then hand the heap that parsing and the old pool freed back to the
        OS (the old pool is gone unless a request still holds it; the next install trims that)."""
        self.swap(pool)
        await asyncio.to_thread(release_free_memory)

    def current(self) -> Pool:
        pool = self.pool
        if pool is None:
            raise RuntimeError("the pool is not loaded yet")
        return pool

    async def exports_body(self) -> bytes:
        """The ``pool-exports`` body, cached for ``exports_list_cache_seconds`` so API traffic cannot
        become storage traffic; concurrent misses share one listing call."""
        cached = self._listing
        ttl = self.settings.exports_list_cache_seconds
        if cached is not None and time.monotonic() - cached[0] < ttl:
            return cached[1]
        async with self._listing_lock:
            cached = self._listing
            if cached is not None and time.monotonic() - cached[0] < ttl:
                return cached[1]
            if self.store is None:
                listing = ExportListing((), truncated=False)
            else:
                listing = await self.store.list_exports(self.settings.exports_list_max)
            body = orjson.dumps(listing_json(listing))
            self._listing = (time.monotonic(), body)
            return body


def listing_json(listing: ExportListing) -> dict[str, Any]:
    """A PoolExportsResponse."""
    return {
        "objects": [
            {
                "key": item.key,
                "size": item.size,
                "uploaded": item.uploaded.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            for item in listing.objects
        ],
        "truncated": listing.truncated,
    }
