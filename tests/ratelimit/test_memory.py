from __future__ import annotations

from collections import Counter

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sudokupool.ratelimit.memory import MemoryStore
from sudokupool.ratelimit.window import decide, window_index
from tests.helpers import MINUTE, FakeClock


def test_counts_per_identity_and_refuses_past_the_limit() -> None:
    store = MemoryStore(clock=FakeClock(MINUTE + 10))
    decisions = [store.hit_now("a", 3) for _ in range(4)]
    other = store.hit_now("b", 3)
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert decisions[-1].retry_after == 50
    assert other.allowed
    assert other.remaining == 2


def test_a_new_window_starts_at_the_minute_and_drops_old_counts() -> None:
    clock = FakeClock(MINUTE + 59.9)
    store = MemoryStore(clock=clock)
    for name in ("a", "b", "c"):
        store.hit_now(name, 1)
    assert not store.hit_now("a", 1).allowed
    clock.now = MINUTE + 60
    decision = store.hit_now("a", 1)
    assert decision.allowed
    assert decision.reset_seconds == 60
    assert len(store) == 1


def test_a_clock_stepping_back_does_not_reopen_a_window() -> None:
    clock = FakeClock(MINUTE + 60.5)
    store = MemoryStore(clock=clock)
    assert store.hit_now("a", 1).allowed
    clock.now = MINUTE + 59.5
    assert not store.hit_now("a", 1).allowed


def test_identities_past_the_cap_share_bounded_counters_that_never_undercount() -> None:
    store = MemoryStore(clock=FakeClock(MINUTE), max_identities=10, overflow_slots=4)
    for n in range(10):
        store.hit_now(f"exact-{n}", 5)
    flood = [store.hit_now(f"flood-{n}", 5) for n in range(100)]
    assert len(store) == 10
    # 100 requests over 4 shared counters: most of the flood is refused, none is counted as fewer
    # requests than it made, and the exactly counted identities are unaffected.
    assert sum(d.allowed for d in flood) <= 4 * 5
    assert store.hit_now("flood-0", 1000).remaining <= 1000 - 2
    assert store.hit_now("exact-0", 5).remaining == 3


@pytest.mark.anyio
async def test_concurrent_hits_admit_exactly_the_limit() -> None:
    store = MemoryStore(clock=FakeClock(MINUTE + 1))
    allowed: list[bool] = []

    async def one() -> None:
        allowed.append((await store.hit("client", 60)).allowed)

    async with anyio.create_task_group() as tasks:
        for _ in range(200):
            tasks.start_soon(one)
    assert allowed.count(True) == 60
    assert len(allowed) == 200


@given(
    st.lists(st.tuples(st.floats(0, 150), st.sampled_from(["a", "b", "c"]), st.integers(1, 4)), min_size=1, max_size=60)
)
def test_decisions_are_those_of_the_window_arithmetic(hits: list[tuple[float, str, int]]) -> None:
    """The store's inlined decision equals ``decide`` on a plain count per identity and window."""
    clock = FakeClock(MINUTE)
    store = MemoryStore(clock=clock)
    counts: Counter[tuple[int, str]] = Counter()
    newest = window_index(MINUTE)
    for offset, identity, limit in hits:
        clock.now = MINUTE + offset  # forward and back: a clock stepped back keeps the newest window
        newest = max(newest, window_index(clock.now))
        counts[newest, identity] += 1
        assert store.hit_now(identity, limit) == decide(counts[newest, identity], limit, clock.now)


def test_a_request_that_costs_more_counts_as_that_many() -> None:
    store = MemoryStore(clock=FakeClock(MINUTE + 10))

    decisions = [store.hit_now("ip:a", 10, cost) for cost in (5, 1, 5)]

    assert [(d.allowed, d.remaining) for d in decisions] == [(True, 5), (True, 4), (False, 0)]
    assert store.hit_now("ip:b", 10).remaining == 9
