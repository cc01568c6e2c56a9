"""One log line when a dependency becomes unreachable and one when it answers again.

Whoever calls the dependency reports each failure and each success here; the log shows the outage, not
every failed call: a WARNING with the first failure's reason when the outage starts, and an INFO line
with its length and the number of failed calls when a call succeeds again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class OutageLog:
    """Whether ``what`` (``"storage s3://bucket/prefix/"``) is down, logged once per change of state."""

    def __init__(self, what: str, logger: logging.Logger, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self._logger = logger
        self._clock = clock
        self._since: float | None = None
        self.failures = 0

    @property
    def down(self) -> bool:
        return self._since is not None

    def failed(self, reason: str, *, logged: bool = False) -> None:
        """A call failed. The first failure of an outage is logged, unless the caller ``logged`` it already."""
        self.failures += 1
        if self._since is None:
            self._since = self._clock()
            if not logged:
                self._logger.warning("%s unreachable: %s", self.what, reason)

    def recovered(self) -> None:
        """A call succeeded: ends the outage (with one line) if there was one."""
        since = self._since
        if since is None:
            return
        self._logger.info(
            "%s is reachable again after %.0f s; %d call(s) failed meanwhile",
            self.what,
            self._clock() - since,
            self.failures,
        )
        self._since = None
        self.failures = 0
