"""The outage log: one line when a service the app depends on (export storage, Redis) becomes unreachable,
and one when it answers again.

Whoever calls the service reports each failed call and each call that worked; the log shows the outage,
not every failed call, whoever meets it first:

- a WARNING when it starts, ``<service> [server] unreachable: <first failure>[; <what happens meanwhile>]``;
- an INFO line when a call works again, ``<service> [server] is reachable again after <t> s; <n> call(s)
  failed[, <m> request(s) answered without it] meanwhile``.

A service with several servers (the nodes of a Redis Cluster) has one outage per server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

#: What the app does while Redis is down, whoever met the outage (the limiter or the activity counters).
REDIS_MEANWHILE = "the rate limiter answers per its failure mode and the activity counters count per instance"


def storage_outages(*, clock: Callable[[], float] = time.monotonic) -> OutageLog:
    """The log of export storage's outages, shared by whoever calls storage (the sync, the export listing)."""
    return OutageLog("storage", logging.getLogger("sudokupool.storage"), clock=clock)


def redis_outages(*, clock: Callable[[], float] = time.monotonic) -> OutageLog:
    """The log of Redis's outages, shared by the limiter and the activity counters of one process."""
    return OutageLog("Redis", logging.getLogger("sudokupool.redis"), meanwhile=REDIS_MEANWHILE, clock=clock)


@dataclass
class _Outage:
    since: float
    failures: int = 0
    without: int = 0


class OutageLog:
    """The outages of one ``service`` (``"storage"``, ``"Redis"``), logged on ``logger`` once per change of state.

    ``meanwhile`` ends the first line: what the app does until the service is back, when that is the same
    whoever met the outage. ``server`` (``host:port``) names one server of the service; the default, empty,
    is the service as a whole.
    """

    def __init__(
        self,
        service: str,
        logger: logging.Logger,
        *,
        meanwhile: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self._logger = logger
        self._meanwhile = meanwhile
        self._clock = clock
        self._outages: dict[str, _Outage] = {}

    @property
    def down(self) -> bool:
        """Whether any server of the service is failing now (for the metrics)."""
        return bool(self._outages)

    def failed(
        self, reason: str, *, error: BaseException | None = None, server: str = "", logged: bool = False
    ) -> None:
        """A call failed: ``reason`` (and ``error``, when given) says which and why. The first failure of an
        outage is logged, unless the caller ``logged`` it already."""
        outage = self._outages.get(server)
        if outage is None:
            outage = self._outages[server] = _Outage(self._clock())
            if not logged:
                if error is not None:
                    reason = f"{reason}: {type(error).__name__}: {error}"
                if self._meanwhile:
                    reason = f"{reason}; {self._meanwhile}"
                self._logger.warning("%s unreachable: %s", self._name(server), reason)
        outage.failures += 1

    def skipped(self, requests: int = 1, *, server: str = "") -> None:
        """``requests`` were answered without the server during its outage (nothing if it is not down)."""
        outage = self._outages.get(server)
        if outage is not None:
            outage.without += requests

    def recovered(self, server: str = "") -> None:
        """A call worked: ends the server's outage (with one line) if there was one."""
        if not self._outages:
            return
        outage = self._outages.pop(server, None)
        if outage is None:
            return
        without = f", {outage.without} request(s) answered without it" if outage.without else ""
        self._logger.info(
            "%s is reachable again after %.1f s; %d call(s) failed%s meanwhile",
            self._name(server),
            self._clock() - outage.since,
            outage.failures,
            without,
        )

    def _name(self, server: str) -> str:
        return f"{self.service} {server}" if server else self.service
