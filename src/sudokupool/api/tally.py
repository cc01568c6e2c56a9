"""The request tally: what the request path counts when metrics are on, in plain Python numbers.

Every request adds its duration to one series, keyed by route *template* (never the raw path: ids
create no series), method and status; the exporter drains the tally into prometheus-client's objects
when it is scraped (and, with several workers, every second): counting into prometheus-client's own objects on
every request costs several times as much (docs/benchmarks.md, "Figures the code's design rests on").
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable
from typing import Final

from starlette.types import Message, Scope, Send

#: (surface, route template): ``("v2", "/api/v2/puzzles/{id}")``. Surfaces: v2, v1, unversioned, site.
Route = tuple[str, str]

#: The route of a path no route matched (an unknown path is a 404, not a series of its own).
UNMATCHED: Final = "unmatched"

#: Upper bounds (seconds) of the latency histogram's buckets; the last bucket is +Inf. A puzzle by id
#: takes well under a millisecond in the app, a rendered image tens of milliseconds.
BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

#: Methods counted under their own name; any other is counted as ``other``, so a client inventing
#: methods cannot create series.
METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})

#: Status codes counted under their own number (label ``code``); any other is counted under its class
#: (``"4xx"``), so a handler or a server inventing codes cannot create series.
CODES: Final = frozenset(
    {200, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 408, 411, 412, 413, 414, 415, 416, 422, 429, 431}
    | {500, 501, 502, 503, 504}
)


def code_label(status: int) -> str:
    """The ``code`` label of ``status``: itself when in :data:`CODES`, else its class."""
    return str(status) if status in CODES else f"{status // 100}xx"


#: ``[sum of seconds, count in bucket 0, ..., count in the +Inf bucket]``.
Counts = list[float]
Series = dict[tuple[Route, str, int], Counts]


class RequestTally:
    """Requests and their durations by (route, method, status), since the last :meth:`drain`.

    One tally per process, used from its event loop only. ``started`` counts the requests that entered
    the app: the ones in flight are those started and not yet observed.
    """

    def __init__(self) -> None:
        self.series: Series = {}
        self.started = 0

    def observe(self, route: Route, method: str, status: int, seconds: float) -> None:
        """Count one request that took ``seconds`` in the app."""
        key = (route, method, status)
        counts = self.series.get(key)
        if counts is None:
            if method not in METHODS:
                key = (route, "other", status)
            counts = self.series.get(key)
            if counts is None:
                counts = self.series[key] = [0.0] * (len(BUCKETS) + 2)
        counts[0] += seconds
        counts[bisect_left(BUCKETS, seconds) + 1] += 1

    def drain(self) -> Series:
        """The series counted since the last drain; the tally starts again from nothing."""
        series, self.series = self.series, {}
        return series

    async def measure(self, route: Route, scope: Scope, call: Callable[[Send], Awaitable[None]], send: Send) -> None:
        """Run ``call`` (an app answering the request through the ``send`` it is given) and count it.

        For the paths off the hot path (the web page, CORS preflights); the API router counts its own.
        """
        start = time.perf_counter()
        self.started += 1
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await call(send_status)
        finally:
            self.observe(route, scope["method"], status, time.perf_counter() - start)
