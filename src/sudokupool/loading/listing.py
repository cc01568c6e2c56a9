"""The ``pool-exports`` body: cached, fetched by one storage call at a time, and quick to say no.

API traffic must not become storage traffic, least of all while storage is down. So:

- a listing is kept for ``exports_list_cache_seconds``;
- at most one storage call is in flight: every request that finds no fresh listing shares it;
- a failed call is remembered for :data:`FAILURE_SECONDS`: meanwhile requests are answered 503 at once,
  without asking storage again;
- no request waits more than :data:`WAIT_SECONDS` for the call in flight. One that would is answered
  with the previous listing if there is one (a refresh of an expired listing) and storage was not
  failing, else 503, while the call carries on and fills the cache for the next request. A storage call that
  fails can take seconds (the S3 client retries with backoff; a host that drops packets takes its
  connect timeout), and none of that time is spent by the client.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sudokupool.services.outages import OutageLog
from sudokupool.serving.tasks import cancel
from sudokupool.storage.base import StorageError

#: How long a failed listing is remembered: at most one storage call per this many seconds in an outage.
FAILURE_SECONDS = 5.0
#: The longest a request waits for the storage call in flight. A healthy listing of a small prefix takes
#: tens of milliseconds; only the first listing after startup can be answered 503 for being slower.
WAIT_SECONDS = 0.25

UNREACHABLE = "storage is unreachable; the export listing is unavailable right now"


class ListingUnavailable(Exception):
    """No listing to answer with now; ``retry_after`` is the whole number of seconds worth waiting."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class _Fetched:
    """What one storage call gave: the body, or the failure."""

    body: bytes | None
    failure: BaseException | None


class ExportsPage:
    """The cached ``pool-exports`` body. ``fetch`` lists storage and returns the body, raising
    :class:`StorageError` when storage cannot be listed; ``outage`` hears of every call's outcome."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[bytes]],
        *,
        ttl: float,
        outage: OutageLog,
        failure_ttl: float = FAILURE_SECONDS,
        wait: float = WAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._ttl = ttl
        self._outage = outage
        self._failure_ttl = failure_ttl
        self._wait = wait
        self._clock = clock
        self._body: bytes | None = None
        # The last body storage gave, fresh or not: the answer when a refresh is slow.
        self._last: bytes | None = None
        self._fresh_until = -math.inf
        self._failed_until = -math.inf
        # The last call failed: until one succeeds, a slow call is no reason to serve the old listing.
        self._failing = False
        self._task: asyncio.Task[_Fetched] | None = None
        # Bumped by clear(): a call started before it must not store what it got afterwards.
        self._generation = 0

    def clear(self) -> None:
        """Forget the cached listing (a new export was swapped in); a failure is still remembered."""
        self._body = None
        self._fresh_until = -math.inf
        self._generation += 1

    async def aclose(self) -> None:
        """Cancel a storage call still in flight (at shutdown)."""
        await cancel(self._task)

    async def body(self) -> bytes:
        """The body; raise :class:`ListingUnavailable` while storage is failing or slow to answer.

        An unexpected exception of ``fetch`` (a bug, not an outage) is raised to every waiting caller.
        """
        now = self._clock()
        body = self._body
        if body is not None and now < self._fresh_until:
            return body
        if now < self._failed_until:
            raise ListingUnavailable(UNREACHABLE, max(1, math.ceil(self._failed_until - now)))
        task = self._task
        if task is None:
            task = self._task = asyncio.create_task(self._call(), name="sudokupool-pool-exports")
        try:
            # Shielded: a caller that gives up (or disconnects) must not cancel the call others share.
            fetched = await asyncio.wait_for(asyncio.shield(task), self._wait)
        except TimeoutError:
            if self._failing:
                raise ListingUnavailable(UNREACHABLE, max(1, math.ceil(self._failure_ttl))) from None
            if self._last is not None:
                return self._last
            raise ListingUnavailable("the export listing is still being fetched from storage", 1) from None
        if fetched.body is not None:
            return fetched.body
        if isinstance(fetched.failure, StorageError):
            raise ListingUnavailable(UNREACHABLE, max(1, math.ceil(self._failure_ttl)))
        assert fetched.failure is not None
        raise fetched.failure

    async def _call(self) -> _Fetched:
        """One storage call. Returns its outcome rather than raising it, so an outcome no caller waited
        for is never reported as an unretrieved exception."""
        generation = self._generation
        try:
            body = await self._fetch()
        except StorageError as exc:
            self._failed_until = self._clock() + self._failure_ttl
            self._failing = True
            self._outage.failed(f"pool-exports listing: {exc}")
            return _Fetched(None, exc)
        except Exception as exc:
            return _Fetched(None, exc)
        finally:
            self._task = None
        self._outage.recovered()
        self._failed_until = -math.inf
        self._failing = False
        self._last = body
        if generation == self._generation:
            self._body = body
            self._fresh_until = self._clock() + self._ttl
        return _Fetched(body, None)
