from __future__ import annotations

import asyncio
import logging

import pytest

from sudokupool.loading.listing import ExportsPage, ListingUnavailable
from sudokupool.services.outages import OutageLog, storage_outages
from sudokupool.storage.base import StorageError
from tests.helpers import FakeClock, wait_until_async

pytestmark = pytest.mark.anyio


class Storage:
    """A fetch that counts its calls, fails while ``down``, and takes ``delay`` seconds (event-loop time), or,
    while ``hold`` is in force, until ``release``: a slow call that ends when the test says, not after a sleep."""

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.down = False
        self.delay = 0.01
        self.error: Exception | None = None
        self.gate: asyncio.Event | None = None
        self.idle = asyncio.Event()
        self.idle.set()

    def hold(self) -> None:
        self.gate = asyncio.Event()

    async def release(self) -> None:
        """Let the held calls finish, and return once they have (and the listing has taken their outcome)."""
        assert self.gate is not None
        self.gate.set()
        self.gate = None
        await self.idle.wait()

    async def fetch(self) -> bytes:
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.idle.clear()
        try:
            if self.gate is not None:
                await self.gate.wait()
            else:
                await asyncio.sleep(self.delay)
            if self.error is not None:
                raise self.error
            if self.down:
                raise StorageError("s3://bucket/exports/: Connection refused")
            return f"listing {self.calls}".encode()
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self.idle.set()


def make(storage: Storage, clock: FakeClock, *, ttl: float = 60.0, wait: float = 5.0) -> tuple[ExportsPage, OutageLog]:
    outage = storage_outages(clock=clock)
    return ExportsPage(storage.fetch, ttl=ttl, outage=outage, failure_ttl=5.0, wait=wait, clock=clock), outage


async def gather_outcomes(listing: ExportsPage, n: int) -> list[bytes | ListingUnavailable]:
    async def one() -> bytes | ListingUnavailable:
        try:
            return await listing.body()
        except ListingUnavailable as exc:
            return exc

    return list(await asyncio.gather(*(one() for _ in range(n))))


async def test_concurrent_misses_share_one_call_and_the_result_is_cached() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    listing, _ = make(storage, clock)
    assert await gather_outcomes(listing, 30) == [b"listing 1"] * 30
    assert storage.calls == 1
    assert await listing.body() == b"listing 1"
    clock.now += 61
    assert await listing.body() == b"listing 2"
    assert storage.calls == 2


async def test_an_outage_is_one_call_per_failure_period_and_answers_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    storage.down = True
    listing, outage = make(storage, clock)
    with caplog.at_level(logging.INFO, logger="sudokupool.storage"):
        outcomes = await gather_outcomes(listing, 30)
        assert all(isinstance(o, ListingUnavailable) for o in outcomes)
        assert storage.calls == 1
        assert storage.most_in_flight == 1
        # Remembered: no storage call, and the answer says how long to wait.
        clock.now += 2
        for _ in range(100):
            with pytest.raises(ListingUnavailable) as caught:
                await listing.body()
            assert caught.value.retry_after == 3
            assert caught.value.message == "storage is unreachable; the export listing is unavailable right now"
        assert storage.calls == 1
        # Once the failure is older than failure_ttl, one new call; still down.
        clock.now += 4
        await gather_outcomes(listing, 10)
        assert storage.calls == 2
        assert outage.down
        # Storage is back: the next call after the failure period succeeds and ends the outage.
        storage.down = False
        clock.now += 6
        assert await listing.body() == b"listing 3"
    messages = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sudokupool.storage"]
    assert messages == [
        ("WARNING", "storage unreachable: pool-exports listing: s3://bucket/exports/: Connection refused"),
        ("INFO", "storage is reachable again after 12.0 s; 2 call(s) failed meanwhile"),
    ]


async def test_a_slow_call_answers_503_after_the_wait_and_fills_the_cache_later() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    storage.hold()
    listing, _ = make(storage, clock, wait=0.05)
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcomes = await gather_outcomes(listing, 20)
    assert loop.time() - started < 0.25
    assert all(isinstance(o, ListingUnavailable) and o.retry_after == 1 for o in outcomes)
    await storage.release()
    assert storage.calls == 1
    assert await listing.body() == b"listing 1"
    assert storage.calls == 1


async def test_clear_drops_the_cached_listing_and_a_call_in_flight_does_not_restore_it() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    listing, _ = make(storage, clock)
    assert await listing.body() == b"listing 1"
    listing.clear()
    storage.hold()
    pending = asyncio.create_task(listing.body())
    await wait_until_async(lambda: storage.in_flight == 1, "the call in flight")
    listing.clear()  # a new export swapped in while the call was in flight
    await storage.release()
    assert await pending == b"listing 2"
    assert await listing.body() == b"listing 3"


async def test_an_unexpected_error_reaches_the_caller_and_is_not_remembered() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    storage.error = KeyError("bug")
    listing, outage = make(storage, clock)
    with pytest.raises(KeyError):
        await listing.body()
    assert not outage.down
    storage.error = None
    assert await listing.body() == b"listing 2"


async def test_aclose_cancels_the_call_in_flight() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    storage.delay = 10
    listing, _ = make(storage, clock, wait=0.01)
    with pytest.raises(ListingUnavailable):
        await listing.body()
    await listing.aclose()
    assert storage.in_flight == 0


async def test_a_slow_refresh_answers_with_the_previous_listing() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    listing, _ = make(storage, clock, wait=0.05)
    assert await listing.body() == b"listing 1"
    clock.now += 61
    storage.hold()
    assert await gather_outcomes(listing, 10) == [b"listing 1"] * 10
    await storage.release()
    assert await listing.body() == b"listing 2"
    assert storage.calls == 2


async def test_a_slow_call_during_an_outage_answers_503_not_the_previous_listing() -> None:
    storage, clock = Storage(), FakeClock(1000.0)
    listing, _ = make(storage, clock, wait=0.05)
    assert await listing.body() == b"listing 1"
    clock.now += 61
    storage.down = True
    with pytest.raises(ListingUnavailable):
        await listing.body()
    clock.now += 6
    storage.hold()
    storage.down = False
    outcomes = await gather_outcomes(listing, 5)
    assert all(isinstance(o, ListingUnavailable) and o.retry_after == 5 for o in outcomes)
    await storage.release()
    assert await listing.body() == b"listing 3"
