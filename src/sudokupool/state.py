"""The app's live state: the current pool (swapped whole on reload), the store, counters and caches."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from datetime import UTC
from typing import Any

import orjson

from sudokupool.activity.counters import Activity
from sudokupool.config import Settings
from sudokupool.loading.listing import ExportsPage
from sudokupool.loading.status import SyncStatus
from sudokupool.pool.pool import Pool
from sudokupool.services.outages import storage_outages
from sudokupool.serving.heap import release_free_memory
from sudokupool.storage.base import ExportListing, ExportObject, ExportStore
from sudokupool.work import WorkPool
from sudokupool.work.cache import CacheTally, ResultCache

#: How long a swap waits for the requests that still use the old pool before dropping it anyway (a
#: request that holds it longer lets it go on the event loop when it ends).
RETIRE_SECONDS = 5.0
#: Where an export is downloaded: this and its file name.
EXPORT_DOWNLOADS = "/api/v2/pool-exports/"
#: Checksums a listing asks the store for at once (an S3 HEAD each, the first time).
CHECKSUMS_AT_ONCE = 8
#: The modules of the functions the app submits to its work pool (renders, print sheets, grades and hints): a
#: new work process imports them before its first job.
JOB_MODULES = ("sudokupool.images.render", "sudokupool.web.printsheet", "sudokupool.sudoku.answers")


class Runtime:
    """Everything a handler reads. ``pool`` is replaced as one reference; a Pool is never mutated.

    It is the :class:`~sudokupool.loading.status.SyncTarget` that :class:`~sudokupool.loading.sync.PoolSync` keeps
    in step with storage.
    """

    def __init__(self, settings: Settings, *, pool: Pool | None = None, store: ExportStore | None = None) -> None:
        self.settings = settings
        self.pool: Pool | None = pool
        self.store = store
        self.activity = Activity()
        # Rendered images (every format and size) of the current pool; emptied on every swap, so a new export
        # never serves a stale image. Its hits, misses and renders add up across swaps in one tally.
        self.image_tally = CacheTally()
        self.images = ResultCache(settings.image_cache_bytes, tally=self.image_tally)
        # Grid answers and hints (GET /grids/..., /puzzles/{id}/hint): emptied on every swap too, as an answer
        # says whether the pool holds the grid.
        self.answer_tally = CacheTally()
        self.answers = ResultCache(settings.engine_cache_bytes, tally=self.answer_tally)
        #: Computed work (uncached renders, print sheets): its own processes, bounded queue and budget.
        self.work = WorkPool.from_settings(settings, preload=JOB_MODULES)
        self.sync = SyncStatus()
        #: One line when storage becomes unreachable and one when it is back, whoever notices (listing, sync).
        self.storage_outage = storage_outages()
        self.listing = ExportsPage(
            self._list_exports, ttl=settings.exports_list_cache_seconds, outage=self.storage_outage
        )

    def swap(self, pool: Pool) -> None:
        """Make ``pool`` the one every following request sees."""
        self.pool = pool
        self.listing.clear()
        self.images = ResultCache(self.settings.image_cache_bytes, tally=self.image_tally)
        self.answers = ResultCache(self.settings.engine_cache_bytes, tally=self.answer_tally)

    async def install(self, pool: Pool) -> None:
        """:meth:`swap` in ``pool``, let the old pool go (:meth:`_retire`), then, when ``pool`` was parsed or
        is the first (nothing is served yet), hand the heap that loading freed back to the OS: a pack's checks
        leave some of each worker's heap free but kept. Not after a later pack was mapped: ``malloc_trim`` holds
        up the event loop while it runs, on every swap, and the next check reuses what this one left
        (docs/benchmarks.md, "Figures the code's design rests on")."""
        started = time.perf_counter()
        first = self.pool is None
        old = [] if self.pool is None else [self.pool]
        self.swap(pool)
        if old:
            await self._retire(old)  # empties ``old``
        if pool.info.parsed or first:
            await asyncio.to_thread(release_free_memory)
        self.sync.last_swap_seconds = time.perf_counter() - started

    @staticmethod
    async def _retire(old: list[Pool]) -> None:
        """Drop the last reference to the pool in ``old`` in a thread, once no request holds it (or after
        :data:`RETIRE_SECONDS`): the pack's mapping goes with it, and unmapping a large touched mapping is too slow
        for the event loop; in a thread it lets go of the GIL."""
        deadline = time.monotonic() + RETIRE_SECONDS
        # Two references: the list's and getrefcount's argument. More: a request is still using it.
        while sys.getrefcount(old[0]) > 2 and time.monotonic() < deadline:  # noqa: ASYNC110 - no event to wait on
            await asyncio.sleep(0.02)
        await asyncio.to_thread(_release, old)

    def current(self) -> Pool:
        pool = self.pool
        if pool is None:
            raise RuntimeError("the pool is not loaded yet")
        return pool

    async def exports_body(self) -> bytes:
        """The ``pool-exports`` body (see :class:`~sudokupool.loading.listing.ExportsPage`); raise
        :class:`~sudokupool.loading.listing.ListingUnavailable` while storage fails or is slow to answer."""
        return await self.listing.body()

    async def _list_exports(self) -> bytes:
        checksums: list[str | None] = []
        if self.store is None:
            listing = ExportListing((), truncated=False)
        else:
            store = self.store
            listing = await store.list_exports(self.settings.exports_list_max)
            # Each store keeps what it found (a file's hash, an object's HEAD), so a listing asks once per export.
            gate = asyncio.Semaphore(CHECKSUMS_AT_ONCE)

            async def checksum(export: ExportObject) -> str | None:
                async with gate:
                    return await store.checksum(export)

            checksums = await asyncio.gather(*(checksum(export) for export in listing.objects))
        body = listing_json(listing, checksums)
        body["license"] = self.settings.export_license or None
        return orjson.dumps(body)


def _release(old: list[Pool]) -> None:
    if sys.getrefcount(old[0]) <= 2:  # the list's and the argument's: no request reads it
        old[0].drop_pages()
    old.clear()


def listing_json(listing: ExportListing, checksums: Sequence[str | None] = ()) -> dict[str, Any]:
    """A PoolExportsResponse: each export with where to download it (``EXPORT_DOWNLOADS`` and its file name)
    and its SHA-256 (from ``checksums``, in the listing's order; None where unknown)."""
    return {
        "objects": [
            {
                "key": item.key,
                "size": item.size,
                "uploaded": item.uploaded.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "url": EXPORT_DOWNLOADS + item.key.rsplit("/", 1)[-1],
                "sha256": checksums[k] if k < len(checksums) else None,
            }
            for k, item in enumerate(listing.objects)
        ],
        "truncated": listing.truncated,
    }
