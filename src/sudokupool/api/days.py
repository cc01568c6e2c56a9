"""Days of the puzzle of the day: ``date`` and ``tz`` checked, today in a time zone, and when that day ends.

A day is a calendar date, numbered as days since 1970-01-01; the puzzle of a date is the same wherever it is
asked from. ``tz`` (an IANA name such as ``America/New_York``) only says which date "today" is and when it
ends: the first instant of the next date in that zone. Zones come from :mod:`zoneinfo`, which reads the
system's database and otherwise the ``tzdata`` package (a dependency), so a host with no ``/usr/share/zoneinfo``
still knows every zone.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import lru_cache
from typing import Final, NamedTuple

from sudokupool.api.errors import BadRequest

DAY_SECONDS: Final = 86_400
EPOCH_DAY: Final = date(1970, 1, 1).toordinal()
_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
DATE_ERROR: Final = "date must be a calendar date as YYYY-MM-DD"
TZ_ERROR: Final = "tz must be an IANA time zone name such as Europe/Paris or America/New_York"
#: An IANA name: letters, digits and ``_+-`` in parts joined by ``/`` (the longest names are ~30 characters).
_ZONE_NAME: Final = re.compile(r"[A-Za-z0-9_+-]{1,40}(?:/[A-Za-z0-9_+-]{1,40}){0,3}")


def day_number(value: str, name: str = "date") -> int:
    """A ``YYYY-MM-DD`` parameter as days since 1970-01-01; :class:`BadRequest` when it is no calendar date."""
    try:
        if not _DATE.fullmatch(value):
            raise ValueError
        return date.fromisoformat(value).toordinal() - EPOCH_DAY
    except ValueError:
        raise BadRequest(DATE_ERROR.replace("date", name, 1)) from None


def day_name(day: int) -> str:
    """Day ``day`` (days since 1970-01-01) as ``YYYY-MM-DD``."""
    return date.fromordinal(day + EPOCH_DAY).isoformat()


@lru_cache(maxsize=512)
def _zone(name: str) -> tzinfo | None:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None


def zone(name: str | None) -> tzinfo:
    """The zone of the ``tz`` parameter (UTC when absent); :class:`BadRequest` for an empty or unknown name.
    Only names of the IANA form are looked up, so no other string reaches the file system."""
    if name is None:
        return UTC
    found = _zone(name) if _ZONE_NAME.fullmatch(name) and ".." not in name else None
    if found is None:
        raise BadRequest(TZ_ERROR)
    return found


class Today(NamedTuple):
    """Which date it is in a zone (days since 1970-01-01), and the instant (seconds since the epoch) it ends."""

    day: int
    ends_at: float


def today(now: float, where: tzinfo) -> Today:
    """The date at ``now`` (seconds since the epoch) in the zone ``where``, and when it ends there."""
    if where is UTC:
        day = int(now // DAY_SECONDS)
        return Today(day, (day + 1) * DAY_SECONDS)
    local = datetime.fromtimestamp(now, where)
    following = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), where)
    return Today(local.date().toordinal() - EPOCH_DAY, following.timestamp())
