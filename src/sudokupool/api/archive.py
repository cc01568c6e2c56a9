"""``/api/v2/puzzles/daily/archive?from=&to=&difficulty=``: the puzzles of up to 31 past days.

Each day is listed with its share code, difficulty and stars, read from the pack's columns (no record is
inflated). ``to`` defaults to today (UTC) and ``from`` to 30 days before ``to``; days after today are not
listed (they are not past), and a span of more than :data:`MAX_DAYS` is a 400. The answer is the same until
the export changes, so it may be cached: until the end of today (UTC) when it lists today, else for a day.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from zlib import crc32

import orjson
from starlette.types import Scope

from sudokupool.api.days import DAY_SECONDS, day_name, day_number
from sudokupool.api.endpoints import JSON, PAST_DAY_MAX_AGE, Reply
from sudokupool.api.errors import BadRequest
from sudokupool.api.query import difficulty_level, queries
from sudokupool.sudoku import DIFFICULTIES

if TYPE_CHECKING:
    from sudokupool.api.endpoints import Endpoints

#: The most days one answer lists.
MAX_DAYS: Final = 31


def daily_archive(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """The puzzles of the days ``from`` to ``to`` (inclusive, newest first)."""
    raw: bytes = scope["query_string"]
    params = queries(raw, ("from", "to", "difficulty")) if raw else {}
    level = difficulty_level(params)
    now = endpoints.clock()
    today = int(now // DAY_SECONDS)
    last = today if "to" not in params else day_number(params["to"], "to")
    first = last - (MAX_DAYS - 1) if "from" not in params else day_number(params["from"], "from")
    if last > today:
        raise BadRequest(f"to must be today ({day_name(today)}, UTC) or earlier: the archive lists past days")
    if first > last:
        raise BadRequest("from must not be after to")
    if last - first + 1 > MAX_DAYS:
        raise BadRequest(f"the archive lists at most {MAX_DAYS} days at a time")
    pool = endpoints.runtime.current()
    days = []
    for day in range(last, first - 1, -1):
        index = pool.daily(day, level)
        if index is None:
            break
        days.append(
            {
                "date": day_name(day),
                "canonical_id": pool.canonical_id(index),
                "difficulty": DIFFICULTIES[pool.level(index) - 1],
                "stars": pool.stars(index),
            }
        )
    body = orjson.dumps({"from": day_name(first), "to": day_name(last), "days": days})
    max_age = int((today + 1) * DAY_SECONDS - now) if last == today else PAST_DAY_MAX_AGE
    etag = f'W/"{crc32(body):08x}{len(body):08x}"'
    return endpoints.cacheable(scope, body, etag, JSON, (b"cache-control", b"public, max-age=%d" % max(1, max_age)))
