"""What the sync keeps up to date: the served pool's holder (:class:`SyncTarget`) and :class:`SyncStatus`.

The holder is the app's :class:`~sudokupool.state.Runtime`, one layer up: the sync sees it only through
this protocol, so ``loading`` imports nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from sudokupool.services.outages import OutageLog
from sudokupool.storage.base import ExportStore


@dataclass
class SyncStatus:
    """What the last look for a newer export found (for ``health``)."""

    last_attempt_at: int | None = None
    last_success_at: int | None = None
    last_error: str | None = None
    last_error_at: int | None = None
    #: The served pool came from ``fallback_exports`` because the primary source was unreachable at startup.
    fallback: bool = False
    #: Counts since the process started (for the metrics): looks for a newer export (the startup load is
    #: one), the looks that ended well or failed, and the exports refused for what they contain.
    attempts: int = 0
    successes: int = 0
    failures: int = 0
    refusals: int = 0
    #: Seconds the last load of an export took (download and parse, or map its pack), and the last swap
    #: (from the new pool served to the old one let go), for the metrics.
    last_load_seconds: float | None = None
    last_swap_seconds: float | None = None


class SyncTarget(Protocol):
    """The holder of the served pool, as the sync uses it."""

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> ExportStore | None: ...

    @property
    def pool(self) -> Pool | None: ...

    @property
    def sync(self) -> SyncStatus: ...

    @property
    def storage_outage(self) -> OutageLog:
        """One line when storage becomes unreachable and one when it is back."""

    async def install(self, pool: Pool) -> None:
        """Serve ``pool`` from now on and let the old one go."""
