"""Keep the served pool in step with the newest export: :class:`PoolSync` does the startup load, which
retries storage that cannot be reached (exponential backoff with jitter, for at most
``storage_retry_seconds``) and then falls back to ``fallback_exports`` if one is set, and the live sync,
which every ``sync_interval`` seconds swaps in a newer export, loaded off the request path and validated
exactly as at startup.

Two kinds of failure are kept apart. Storage that cannot be listed or read is *unreachable*: that passes,
so it is retried. An export that is truncated, corrupt, past a bound (``SUDOKUPOOL_MAX_*``) or holds no
valid puzzle is *refused*: that is a mistake of its writer, so startup stops at once (or serves the fallback
export, when one is set), and the sync loop keeps serving the current pool, logs the refusal once and never
downloads that object again (a new key, or the same key uploaded again, is tried).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from sudokupool.loading.loader import LoadError, LoadLimits, load_export, load_latest, verify_bodies
from sudokupool.loading.shared import ListingFile
from sudokupool.loading.status import SyncTarget
from sudokupool.pool.pool import Pool
from sudokupool.serving.tasks import cancel
from sudokupool.storage.base import ExportListing, ExportObject, ExportStore, StorageError
from sudokupool.storage.local import LocalStore
from sudokupool.storage.naming import export_order, pack_key

logger = logging.getLogger("sudokupool.sync")

#: Exports each sync attempt looks at, newest first: enough to reach the newest good export behind a
#: few refused ones. Listing more costs nothing extra (the store reads the whole prefix either way).
CANDIDATES = 16

#: Each sync interval is stretched or shrunk at random by up to this fraction, so instances started
#: together do not all hit storage in the same second.
INTERVAL_JITTER = 0.1

#: A startup listing gets at least this long, even when the retry budget is nearly spent.
MIN_ATTEMPT_SECONDS = 5.0

_BACK = " (the primary source is back; no longer serving the fallback)"


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: the delay doubles from ``first`` up to ``cap``, and each one is
    drawn from the upper half of its step so that instances started together do not retry in step."""

    first: float = 0.5
    cap: float = 5.0

    def delays(self, rng: Callable[[], float] = random.random) -> Iterator[float]:
        step = self.first
        while True:
            yield step * (0.5 + 0.5 * rng())
            step = min(step * 2, self.cap)


class PoolSync:
    """Loads the pool at startup and, once :meth:`start` ed, swaps in newer exports as they appear.

    ``runtime.store`` is the primary store. Unreachable storage is retried at startup for
    ``storage_retry_seconds``, or not at all for a local store (a missing directory is a mistake, not an
    outage). ``sleep``, ``clock`` and ``rng`` are injectable for tests of the startup retries.
    """

    def __init__(
        self,
        runtime: SyncTarget,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
        shared: ListingFile | None = None,
    ) -> None:
        if runtime.store is None:
            raise ValueError("the runtime has no store")
        self.runtime = runtime
        self.store: ExportStore = runtime.store
        settings = runtime.settings
        self.retry_seconds = 0.0 if isinstance(self.store, LocalStore) else settings.storage_retry_seconds
        self.fallback = settings.fallback_exports
        self.limits = LoadLimits.from_settings(settings)
        self._sleep = sleep
        self._clock = clock
        self._rng = rng
        #: Exports refused for what they contain, by (key, size, upload time), with the reason.
        self._refused: dict[tuple[str, int, datetime], str] = {}
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        #: The listing the workers of this instance share (None: this worker lists storage on its own).
        # Not for a local directory, which costs nothing to list.
        local = isinstance(self.store, LocalStore)
        self.shared = shared or (
            None if local else ListingFile.for_instance(os.environ, self.store.description, settings.sync_interval)
        )
        #: The check of the bodies of the pool installed last, when it came from a pack (see :meth:`_install`).
        self._verifying: asyncio.Task[None] | None = None

    # -- startup -------------------------------------------------------------------------------------

    async def load_initial(self) -> None:
        """Load the newest export of the primary store and make it the served pool. Unreachable storage is
        retried with backoff for ``retry_seconds``, then the fallback export is served if one is set (at
        once when the newest export is refused). Raise :class:`LoadError` (one line naming the export or
        the storage and the reason) when there is no usable export and no usable fallback.
        """
        self.runtime.sync.attempts += 1
        started = self._clock()
        deadline = started + self.retry_seconds
        for delay in Backoff().delays(self._rng):
            try:
                await self._install(await self._load_newest(deadline), self.store)
            except LoadError as exc:
                reason, unreachable = str(exc), exc.unreachable
                remaining = deadline - self._clock()
                if not unreachable and not self.fallback:
                    raise
                if not unreachable or remaining <= 0:
                    break
                # One line for the whole outage, not one per retry; the end is logged by storage_outage.
                self.runtime.storage_outage.failed(f"{reason}; retrying for up to {self.retry_seconds:g} s")
                await self._sleep(min(delay, remaining))
            else:
                self.runtime.storage_outage.recovered()
                self._succeeded()
                return
        retried = unreachable and self.retry_seconds > 0
        gave_up = f" (still unreachable after {self._clock() - started:.0f} s of retries)" if retried else ""
        if not self.fallback:
            # The fallback is for object storage that cannot be reached; a local path has no outage to ride out.
            hint = "" if isinstance(self.store, LocalStore) else "; no SUDOKUPOOL_FALLBACK_EXPORTS to serve instead"
            raise LoadError(f"{reason}{gave_up}{hint}")
        fallback_store = LocalStore(self.fallback)
        try:
            pool, report = await load_latest(fallback_store, limits=self.limits)
        except LoadError as exc:
            raise LoadError(f"{reason}{gave_up}; the fallback failed too: {exc}") from None
        logger.info("%s", report.summary(), extra=report.fields())
        fallback = f"{self.fallback.rstrip('/')}/{pool.info.export_key}"
        primary = self.store.description
        logger.warning(
            "serving the FALLBACK export %s: %s%s; live sync keeps trying %s", fallback, reason, gave_up, primary
        )
        await self._install(pool, fallback_store)
        self.runtime.sync.fallback = True
        if unreachable:
            # The FALLBACK line above says storage is down; the outage log says when it is back.
            self.runtime.storage_outage.failed(reason, logged=True)
        self._failed(reason)

    async def _load_newest(self, deadline: float) -> Pool:
        store = self.store
        try:
            # The store's own timeouts bound a listing too; this keeps one slow attempt within the budget.
            async with asyncio.timeout(max(deadline - self._clock(), MIN_ATTEMPT_SECONDS)):
                listing = await store.list_exports(limit=1)
        except (StorageError, TimeoutError) as exc:
            why = str(exc) or "timed out"
            unreachable = not getattr(exc, "permanent", False)
            raise LoadError(f"cannot list exports in {store.description}: {why}", unreachable=unreachable) from None
        latest = listing.latest
        if latest is None:
            raise LoadError(f"no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz]) found in {store.description}")
        try:
            return await self._load(latest)
        except LoadError as exc:
            if not exc.unreachable:
                # Remembered, so that a sync while serving the fallback does not load it again.
                self._refused[(latest.key, latest.size, latest.uploaded)] = f"refused: {exc}"
            raise

    async def _load(self, export: ExportObject, *, background: bool = False) -> Pool:
        """Load ``export`` (``background``: a live reload, see :func:`load_export`) and log its report."""
        cache_dir = self.runtime.settings.cache_dir or None
        started = time.perf_counter()
        pool, report = await load_export(
            self.store, export, background=background, cache_dir=cache_dir, limits=self.limits
        )
        logger.info("%s%s", self._demo_note(), report.summary(), extra=report.fields())
        self.runtime.sync.last_load_seconds = time.perf_counter() - started
        return pool

    def _demo_note(self) -> str:
        """What a load line of the bundled demo pool starts with: it is not the operator's pool, and a
        misspelt or missing ``SUDOKUPOOL_EXPORTS`` is the usual reason it is served."""
        if not (isinstance(self.store, LocalStore) and self.store.demo):
            return ""
        unset = "" if self.runtime.settings.exports else ", as SUDOKUPOOL_EXPORTS is not set"
        return f"the DEMO pool (snapshots/{unset}): "

    # -- live sync -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the background loop (once), unless ``sync_interval`` is 0."""
        interval = self.runtime.settings.sync_interval
        if interval > 0 and self._task is None:
            self._task = asyncio.create_task(self._run(interval), name="sudokupool-sync")

    async def stop(self) -> None:
        """Cancel the background loop and wait for it to end. A load in progress is abandoned."""
        task, self._task = self._task, None
        await cancel(task)
        verifying, self._verifying = self._verifying, None
        await cancel(verifying)

    # -- a pack's bodies -----------------------------------------------------------------------------

    async def _install(self, pool: Pool, store: ExportStore) -> None:
        """Serve ``pool`` (from ``store``) and, when it was mapped from a pack rather than parsed here,
        check every body in the background (:func:`~sudokupool.loading.loader.verify_bodies`) unless an
        earlier load of the same copy did (``pool.checked.Copy``): a pack with a body that is not its record is refused,
        and its export parsed and served instead."""
        # The check of the pool going out ends first: it holds that pool, which is let go once nothing does.
        await cancel(self._verifying)
        self._verifying = None
        await self.runtime.install(pool)
        if not pool.info.parsed and not pool.all_verified:
            self._verifying = asyncio.create_task(self._verify(pool, store), name="sudokupool-verify")

    async def _verify(self, pool: Pool, store: ExportStore) -> None:
        bad = await verify_bodies(pool, self.limits, threading.Event())
        if bad is None:
            await asyncio.to_thread(pool.record_verified)  # when it went through them all
            return
        info = pool.info
        where = f"{store.description.rstrip('/')}/{pack_key(info.export_key).rsplit('/', 1)[-1]}"
        logger.warning(
            "refused pack %s: puzzle %d's body is not the record the pack says it is; loading the export instead",
            where,
            bad,
        )
        export = ExportObject(info.export_key, info.export_size, datetime.now(UTC))
        try:
            fresh, report = await load_export(
                store,
                export,
                background=True,
                cache_dir=self.runtime.settings.cache_dir or None,
                limits=self.limits,
                packs=False,
            )
        except LoadError as exc:
            logger.warning("%s; still serving %s", exc, self._serving())
            return
        logger.info("%s", report.summary())
        async with self._lock:
            refused = self.runtime.pool is pool
            del pool  # held here, the refused pool could not be let go of at once
            if refused:
                await self.runtime.install(fresh)

    async def _run(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval * (1 + INTERVAL_JITTER * (2 * self._rng() - 1)))
            try:
                await self.check()
            except Exception:
                # A bug, not a storage or export problem (those are handled in check): keep serving and syncing.
                logger.exception("sync attempt failed unexpectedly")

    async def check(self) -> bool:
        """One sync attempt: swap in the newest usable export newer than the served one (never an older
        one); True when it did. The attempt counts as failed in ``runtime.sync`` when storage is
        unreachable or the newest export is refused."""
        async with self._lock:
            began = time.perf_counter()
            status = self.runtime.sync
            status.last_attempt_at = int(time.time())
            status.attempts += 1
            try:
                if self.shared is None:
                    listing = await self.store.list_exports(CANDIDATES)
                else:
                    listing = await self.shared.list(partial(self.store.list_exports, CANDIDATES))
            except StorageError as exc:
                self._unreachable(f"cannot list exports in {self.store.description}: {exc}")
                return False
            listed_in = time.perf_counter() - began
            # Reachable again now, not once a load (a throttled download can take minutes) is done.
            self.runtime.storage_outage.recovered()
            listed = {(e.key, e.size, e.uploaded) for e in listing.objects}
            self._refused = {k: v for k, v in self._refused.items() if k in listed}
            refusal: str | None = None
            swapped = False
            for export in self._candidates(listing):
                identity = (export.key, export.size, export.uploaded)
                known = self._refused.get(identity)
                if known is None:
                    loading = time.perf_counter()
                    try:
                        pool = await self._load(export, background=True)
                    except LoadError as exc:
                        if exc.unreachable:
                            self._unreachable(str(exc))
                            return False
                        known = self._refused[identity] = f"refused: {exc}"
                        status.refusals += 1
                        logger.warning("%s; still serving %s", known, self._serving())
                    else:
                        installing = time.perf_counter()
                        await self._install(pool, self.store)
                        steps = {
                            "list_seconds": round(listed_in, 3),
                            "load_seconds": round(installing - loading, 3),
                            "install_seconds": round(time.perf_counter() - installing, 3),
                        }
                        logger.info(
                            "now serving %s%s (listed in %.2f s, loaded in %.2f s, swapped in and the old pool let "
                            "go in %.2f s)",
                            export.key,
                            _BACK if status.fallback else "",
                            *steps.values(),
                            extra={"export": export.key, **steps},
                        )
                        status.fallback = False
                        swapped = True
                        break
                refusal = refusal or known
            if refusal is None and not status.fallback:
                self._succeeded()
            else:
                self._failed(refusal or f"no export found in {self.store.description}; still serving the fallback")
            return swapped

    def _candidates(self, listing: ExportListing) -> list[ExportObject]:
        """Listed exports worth loading, newest first: all of them while serving the fallback, else only
        those newer than the served export."""
        pool = self.runtime.pool
        if pool is None or self.runtime.sync.fallback:
            return list(listing.objects)
        key = pool.info.export_key
        current = export_order(key)
        return [e for e in listing.objects if e.key != key and (current is None or e.order > current)]

    def _serving(self) -> str:
        pool = self.runtime.pool
        if pool is None:
            return "nothing"
        return f"{pool.info.export_key}{' (fallback)' if self.runtime.sync.fallback else ''}"

    def _unreachable(self, reason: str) -> None:
        # Logged when storage goes away (by the sync or the pool-exports listing), not at every interval.
        self.runtime.storage_outage.failed(f"sync: {reason}; still serving {self._serving()}")
        self._failed(reason)

    def _succeeded(self) -> None:
        self.runtime.sync.last_success_at = int(time.time())
        self.runtime.sync.successes += 1

    def _failed(self, reason: str) -> None:
        status = self.runtime.sync
        status.failures += 1
        status.last_error = reason
        status.last_error_at = int(time.time())
