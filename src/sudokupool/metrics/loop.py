"""Event-loop lag: how late a timer on the worker's event loop fires, sampled a few times a second.

A request waits for the loop as long as the loop is busy with something else (a long handler, a parse
on the loop, a burst of work): the lag is that wait, seen from a timer. Kept in plain numbers, as the
request tally is, and moved into the exporter's histogram at each flush.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from typing import Final

#: Seconds between two samples.
INTERVAL: Final = 0.25

#: Upper bounds (seconds) of the lag histogram's buckets; the last bucket is +Inf.
BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class LoopLag:
    """Samples of the lag since the last :meth:`drain`: ``[sum, count in bucket 0, ..., count in +Inf]``."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self.counts: list[float] = [0.0] * (len(BUCKETS) + 2)

    def observe(self, seconds: float) -> None:
        counts = self.counts
        counts[0] += seconds
        counts[bisect_left(BUCKETS, seconds) + 1] += 1

    def drain(self) -> list[float]:
        counts, self.counts = self.counts, [0.0] * (len(BUCKETS) + 2)
        return counts

    async def run(self) -> None:
        """Sample until cancelled: each sample is how much later than asked a sleep of ``interval`` ended."""
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time() + self.interval
            await asyncio.sleep(self.interval)
            self.observe(max(0.0, loop.time() - asked))
