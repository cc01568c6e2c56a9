"""The process-local limiter store: a dict of counts for the current window, O(1) per request.

Memory stays bounded under a flood of distinct identities (say a million addresses in a minute):
at most ``max_identities`` identities are counted exactly; identities first seen after that share
``overflow_slots`` counters chosen by a per-process randomised hash. A shared counter can only count
*more* requests than an identity made, never fewer, so the overflow can refuse an unlucky client
early but never lets anyone past its limit. Counts of older windows are dropped whole when the
window changes, so nothing needs expiring one by one.
"""

from __future__ import annotations

from array import array

from sudokupool.ratelimit.window import WINDOW_SECONDS, Clock, Decision, wall_clock, window_index

_new = tuple.__new__

_COUNTER_MAX = 2**32 - 1


class MemoryStore:
    """Fixed-window counts in this process (the default when ``SUDOKUPOOL_REDIS_URL`` is empty).

    ``hit_now`` is synchronous and never yields to the event loop between reading and writing a
    count, so concurrent requests on one event loop are counted exactly.
    """

    def __init__(
        self, *, clock: Clock = wall_clock, max_identities: int = 100_000, overflow_slots: int = 65_536
    ) -> None:
        if overflow_slots < 1 or overflow_slots & (overflow_slots - 1):
            raise ValueError("overflow_slots must be a power of two")
        self._clock = clock
        self._max_identities = max_identities
        self._overflow_slots = overflow_slots
        self._mask = overflow_slots - 1
        self._window = window_index(clock())
        self._second = -1  # the clock's whole second at the last request (see _tick)
        self._reset = WINDOW_SECONDS
        self._counts: dict[str, int] = {}
        self._overflow = array("I", bytes(4 * overflow_slots))

    def __len__(self) -> int:
        """Identities counted exactly in the current window."""
        return len(self._counts)

    def hit_now(self, identity: str, limit: int, cost: int = 1) -> Decision:
        """Count one request of ``identity`` now, as ``cost`` requests, and decide it against ``limit``.

        The same decision as :func:`~sudokupool.ratelimit.window.decide`, inlined with the window and the
        seconds to its end worked out once per second of the clock: this runs on every request.
        """
        whole = int(self._clock())
        if whole != self._second:
            self._tick(whole)
        counts = self._counts
        count = counts.get(identity)
        if count is not None:
            count += cost
            counts[identity] = count
        elif len(counts) < self._max_identities:
            count = cost
            counts[identity] = cost
        else:
            slot = hash(identity) & self._mask
            count = min(self._overflow[slot] + cost, _COUNTER_MAX)
            self._overflow[slot] = count
        if count <= limit:
            return _new(Decision, (True, limit, limit - count, self._reset, 0))
        return _new(Decision, (False, limit, 0, self._reset, self._reset))

    def _tick(self, whole: int) -> None:
        """A new second of the clock: the seconds left in the window, and a new window at the minute."""
        index = whole // WINDOW_SECONDS  # window_index(whole)
        self._second = whole
        self._reset = (index + 1) * WINDOW_SECONDS - whole
        # A clock stepped back (NTP) keeps counting in the newest window seen: never reopen a window.
        if index > self._window:
            self._window = index
            self._counts = {}
            self._overflow = array("I", bytes(4 * self._overflow_slots))

    async def hit(self, identity: str, limit: int, cost: int = 1) -> Decision:
        return self.hit_now(identity, limit, cost)

    async def aclose(self) -> None:
        return None
