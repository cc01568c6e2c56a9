"""The outage log: one line when a service the app depends on (export storage, Redis) becomes unreachable,
and one when it answers again.

Whoever calls the service reports each failed call and each call that worked; the log shows the outage,
not every failed call, whoever meets it first:

- a WARNING when it starts, ``<service> [server] unreachable: <first failure>[; <what happens meanwhile>]``;
- an INFO line when a call works again, ``<service> [server] is reachable again after <t> s; <n> call(s)
  failed[, <m> request(s) answered without it] meanwhile``.

A service with several servers (the nodes of a Redis Cluster) has one outage per server.

With a ``probe`` (Redis: a PING on a fresh connection), a server that stopped answering is probed every
``probe_interval`` seconds until it answers, and its outage ends at the first answer: whether traffic
would reach that server again soon does not matter (on a cluster the limiter's keys move to other slots
every minute, so a node may see no call for minutes). A server that answered with an error (the call
reached it) is not probed: its outage ends at the next call that works, as a PING would not tell.

Each line carries ``service`` and ``node`` as record fields (``extra``), and the closing line
``duration`` and ``count``, for a structured log format.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

#: What the app does while Redis is down, whoever met the outage (the limiter or the activity counters).
REDIS_MEANWHILE = "the rate limiter answers per its failure mode and the activity counters count per worker process"

#: Seconds between two probes of a server that stopped answering.
PROBE_SECONDS = 1.0

#: Asks ``server`` (``host:port``) for a sign of life; returns when it answered, raises otherwise.
Probe = Callable[[str], Awaitable[object]]


def storage_outages(*, clock: Callable[[], float] = time.monotonic) -> OutageLog:
    """The log of export storage's outages, shared by whoever calls storage (the sync, the export listing)."""
    return OutageLog("storage", logging.getLogger("sudokupool.storage"), clock=clock)


def redis_outages(
    *,
    clock: Callable[[], float] = time.monotonic,
    probe: Probe | None = None,
    probe_interval: float = PROBE_SECONDS,
) -> OutageLog:
    """The log of Redis's outages, shared by the limiter and the activity counters of one process.

    ``probe``: see :func:`sudokupool.services.redisclient.pinger`."""
    return OutageLog(
        "Redis",
        logging.getLogger("sudokupool.redis"),
        meanwhile=REDIS_MEANWHILE,
        clock=clock,
        probe=probe,
        probe_interval=probe_interval,
    )


@dataclass
class _Outage:
    since: float
    failures: int = 0
    without: int = 0
    probing: asyncio.Task[None] | None = field(default=None, repr=False)


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
        probe: Probe | None = None,
        probe_interval: float = PROBE_SECONDS,
    ) -> None:
        self.service = service
        self._logger = logger
        self._meanwhile = meanwhile
        self._clock = clock
        self._probe = probe
        self._probe_interval = probe_interval
        self._outages: dict[str, _Outage] = {}
        #: Every server a call went to (or failed to reach), for a gauge per server in the metrics.
        self.servers: set[str] = set()
        self._reported: set[str] = set()

    @property
    def down(self) -> bool:
        """Whether any server of the service is failing now (for the metrics)."""
        return bool(self._outages)

    def states(self) -> dict[str, bool]:
        """Each server called so far, and whether it is failing now (for the metrics)."""
        return {server: server in self._outages for server in self.servers}

    def failed(
        self,
        reason: str,
        *,
        error: BaseException | None = None,
        server: str = "",
        logged: bool = False,
        probe: bool = True,
    ) -> None:
        """A call failed: ``reason`` (and ``error``, when given) says which and why. The first failure of an
        outage is logged, unless the caller ``logged`` it already. ``probe``: the server did not answer, so
        it is probed until it does (when this log has a probe); False when it answered with an error."""
        outage = self._outages.get(server)
        if outage is None:
            self.servers.add(server)
            outage = self._outages[server] = _Outage(self._clock())
            if not logged:
                if error is not None:
                    reason = f"{reason}: {type(error).__name__}: {error}"
                if self._meanwhile:
                    reason = f"{reason}; {self._meanwhile}"
                self._logger.warning(
                    "%s unreachable: %s", self._name(server), reason, extra={"service": self.service, "node": server}
                )
        outage.failures += 1
        if probe and self._probe is not None and outage.probing is None:
            with contextlib.suppress(RuntimeError):  # no event loop running: nothing to probe from
                outage.probing = asyncio.get_running_loop().create_task(
                    self._probe_until_back(server, outage), name=f"sudokupool-probe-{server}"
                )

    async def _probe_until_back(self, server: str, outage: _Outage) -> None:
        assert self._probe is not None
        while self._outages.get(server) is outage:
            await asyncio.sleep(self._probe_interval)
            try:
                await self._probe(server)
            except Exception:
                continue
            if self._outages.get(server) is outage:
                outage.probing = None  # ended by its own probe: nothing to cancel
                self.recovered(server)
            return

    def configuration_error(self, message: str) -> None:
        """A setting is wrong (the service answered, but not as configured): ``message`` is logged once per
        process, as an ERROR, and is no outage."""
        if message not in self._reported:
            self._reported.add(message)
            self._logger.error("%s", message, extra={"service": self.service})

    def skipped(self, requests: int = 1, *, server: str = "") -> None:
        """``requests`` were answered without the server during its outage (nothing if it is not down)."""
        outage = self._outages.get(server)
        if outage is not None:
            outage.without += requests

    def recovered(self, server: str = "") -> None:
        """A call worked: ends the server's outage (with one line) if there was one."""
        if not self._outages:
            self.servers.add(server)
            return
        outage = self._outages.pop(server, None)
        if outage is None:
            self.servers.add(server)
            return
        if outage.probing is not None:
            outage.probing.cancel()
        without = f", {outage.without} request(s) answered without it" if outage.without else ""
        duration = self._clock() - outage.since
        self._logger.info(
            "%s is reachable again after %.1f s; %d call(s) failed%s meanwhile",
            self._name(server),
            duration,
            outage.failures,
            without,
            extra={"service": self.service, "node": server, "duration": round(duration, 3), "count": outage.failures},
        )

    async def aclose(self) -> None:
        """Stop probing (at shutdown); the outages stay as they are."""
        tasks = [outage.probing for outage in self._outages.values() if outage.probing is not None]
        for outage in self._outages.values():
            outage.probing = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _name(self, server: str) -> str:
        return f"{self.service} {server}" if server else self.service
