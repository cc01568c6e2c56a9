"""The handlers. Puzzle paths serve bytes the pool prepared at load; nothing is JSON-encoded per request.

A record goes out as the gzip member the pool holds when the client's ``Accept-Encoding`` allows it,
and is inflated for the others; both carry ``Vary: Accept-Encoding`` and the record's one weak ETag.
Short bodies (solutions, stats) and error bodies are always identity.

A handler takes the ASGI scope and the path's id (or None) and returns a :class:`Reply`; the router in
``dispatch.py`` sends it. Client errors are raised as :class:`~sudokupool.api.errors.ApiError`. Handlers work
on the raw scope rather than Starlette's ``Request``/``Response`` objects: these are the hot paths, and
the objects cost more than the rest of the request.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Final, NamedTuple, NoReturn
from zlib import crc32

import orjson
from starlette.types import Scope

from sudokupool.api.compression import GZIP, VARY, gzip_accepted, record_body
from sudokupool.api.computed import charge, left_of, work_error
from sudokupool.api.conditional import not_modified
from sudokupool.api.days import day_number, today, zone
from sudokupool.api.errors import ApiError, BadRequest, NotFound
from sudokupool.api.query import (
    DAILY_PARAMS,
    FORMAT_ERROR,
    VARIANT_ERROR,
    Header,
    RandomQuery,
    clue_filters,
    difficulty_level,
    image_choice,
    image_size,
    queries,
    query,
    random_query,
)
from sudokupool.images.render import DEFAULT_SIZE, FORMATS, MEDIA_TYPES, VARIANTS, Format, render
from sudokupool.loading.listing import ListingUnavailable
from sudokupool.pool.choose import DAY, Filters
from sudokupool.pool.gzip_member import compress
from sudokupool.pool.pool import Pool
from sudokupool.state import Runtime
from sudokupool.storage.naming import export_order
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.work import WorkBudgetExceeded, WorkDropped, WorkQueueFull

JSON: Final[Header] = (b"content-type", b"application/json")
NO_STORE: Final[Header] = (b"cache-control", b"no-store")
IMAGE_TYPES: Final[dict[Format, Header]] = {fmt: (b"content-type", t.encode()) for fmt, t in MEDIA_TYPES.items()}
NO_PUZZLE: Final = "no puzzle has that id"
TECHNIQUE_ERROR: Final = "unknown technique {!r}: the names are listed at /api/v2/techniques"
#: ``max-age`` of the puzzle of a day that is over: nothing schedules a past day any more.
PAST_DAY_MAX_AGE: Final = 86_400


class Reply(NamedTuple):
    """A complete response: status, headers (without Content-Length) and body."""

    status: int
    headers: list[Header]
    body: bytes


Handler = Callable[[Scope, str | None], Reply]
AsyncHandler = Callable[[Scope, str | None], Awaitable[Reply]]


def json_reply(body: bytes) -> Reply:
    """An uncacheable JSON reply."""
    return Reply(200, [JSON, NO_STORE], body)


class Endpoints:
    """The API's handlers, bound to the app's :class:`Runtime`."""

    def __init__(self, runtime: Runtime, openapi_body: bytes, *, clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        #: Seconds since the epoch: which day "today" is for the puzzle of the day (tests inject one).
        self.clock = clock
        #: The technique catalogue's body and ETag, for the pool they were made from.
        self._catalogue: tuple[Pool, bytes, str] | None = None
        self.openapi_body = openapi_body
        # One body of 16 KB (3 KB compressed): kept in both encodings, not inflated per request.
        self.openapi_gzip = compress(openapi_body)
        self.cache_control: Header = (b"cache-control", f"public, max-age={runtime.settings.cache_max_age}".encode())

    def cacheable(
        self, scope: Scope, body: bytes, etag: str, content_type: Header = JSON, cache_control: Header | None = None
    ) -> Reply:
        """A reply that caches may keep (``cache_control``, default the setting's), or 304 when the client
        already has it."""
        headers = [(b"etag", etag.encode()), cache_control or self.cache_control]
        if not_modified(scope, etag):
            return Reply(304, headers, b"")
        return Reply(200, [content_type, *headers], body)

    def record(self, scope: Scope, pool: Pool, index: int, cache_control: Header | None = None) -> Reply:
        """Puzzle ``index``'s record, cacheable (``cache_control``, default the setting's): gzip as held or
        inflated, one weak ETag for both.

        A 304 carries the ETag and Vary a 200 would, and costs no inflate.
        """
        etag = pool.etag(index)
        headers = [(b"etag", etag.encode()), cache_control or self.cache_control, VARY]
        if not_modified(scope, etag):
            return Reply(304, headers, b"")
        coding, body = record_body(scope, pool, index)
        return Reply(200, [JSON, *coding, *headers], body)

    def find(self, param: str | None) -> tuple[Pool, int]:
        pool = self.runtime.current()
        index = pool.find(param or "")
        if index is None:
            raise NotFound(NO_PUZZLE)
        return pool, index

    def health(self, scope: Scope, param: str | None) -> Reply:
        runtime = self.runtime
        pool = runtime.current()
        now = int(time.time())
        sync = runtime.sync
        # When the export was made (the time in its name); a single local file may have another name.
        order = export_order(pool.info.export_key)
        exported_at = int(order[0].timestamp()) if order is not None else None
        body = {
            "ok": True,
            "puzzles": len(pool),
            "export": {
                "source": pool.info.source,
                "key": pool.info.export_key,
                "size": pool.info.export_size,
                "loaded_at": pool.info.loaded_at,
                "age_seconds": now - pool.info.loaded_at,
                "exported_at": exported_at,
                "export_age_seconds": None if exported_at is None else now - exported_at,
                # True while serving fallback_exports because the primary source was unreachable at startup.
                "fallback": sync.fallback,
            },
            "sync": {
                "interval_seconds": runtime.settings.sync_interval,
                "last_attempt_at": sync.last_attempt_at,
                "last_success_at": sync.last_success_at,
                "last_error": sync.last_error,
                "last_error_at": sync.last_error_at,
            },
        }
        return json_reply(orjson.dumps(body))

    def stats(self, scope: Scope, param: str | None) -> Reply:
        return json_reply(self.runtime.current().stats_body)

    async def activity(self, scope: Scope, param: str | None) -> Reply:
        return json_reply(orjson.dumps(await self.runtime.activity.snapshot_async()))

    def random(self, scope: Scope, param: str | None) -> Reply:
        raw: bytes = scope["query_string"]
        asked = random_query(raw) if raw else None
        pool = self.runtime.current()
        index = self.random_index(pool, asked)
        self.runtime.activity.record("random")
        coding, body = record_body(scope, pool, index)
        return Reply(200, [JSON, *coding, VARY, NO_STORE], body)

    def random_index(self, pool: Pool, asked: RandomQuery | None) -> int:
        """The puzzle ``random`` answers ``asked`` with: at random, or the first of the seed's order."""
        index: int | None
        if asked is not None and asked.seed is not None:
            chosen, _ = pool.deal(asked.every_filter(), asked.seed, 0, 1)
            if not chosen:
                self.nothing_matches(pool, asked.every_filter(), asked.asked)
            index = chosen[0]
        elif asked is not None and asked.filters is not None:
            index = self.choose(pool, asked.filters, asked.asked)
        else:
            difficulty = None if asked is None else asked.difficulty
            index = pool.pick(difficulty)
            if index is None:
                raise NotFound(f"no {difficulty} puzzle in the pool" if difficulty else "the pool has no puzzle")
        return index

    def choose(self, pool: Pool, filters: Filters, asked: tuple[tuple[str, str], ...]) -> int:
        """A puzzle of ``pool`` matching ``filters`` (``asked``: as the query spelt them), uniformly at random.
        Raise :class:`BadRequest` for a technique the pool does not know, :class:`NotFound` when nothing
        matches."""
        index = pool.choose(filters)
        if index is None:
            self.nothing_matches(pool, filters, asked)
        return index

    @staticmethod
    def nothing_matches(pool: Pool, filters: Filters, asked: tuple[tuple[str, str], ...]) -> NoReturn:
        """Raise :class:`BadRequest` for a technique the pool does not know, else :class:`NotFound` naming the
        filters (``asked``: as the query spelt them), for a query that nothing matches."""
        named = dict(asked)
        if filters.technique is not None:
            group = pool.choices.groups.get(filters.technique)
            if group is None:
                raise BadRequest(TECHNIQUE_ERROR.format(named["technique"]))
            named["technique"] = pool.choices.names[group - 1]
        if not named:
            raise NotFound("the pool has no puzzle")
        raise NotFound(f"no puzzle matches {', '.join(f'{name}={value}' for name, value in named.items())}")

    def techniques(self, scope: Scope, param: str | None) -> Reply:
        """The technique catalogue: each technique the grader knows, with the pool's count of puzzles using it."""
        pool = self.runtime.current()
        catalogue = self._catalogue
        if catalogue is None or catalogue[0] is not pool:
            body = technique_catalogue(pool)
            catalogue = self._catalogue = (pool, body, f'W/"{crc32(body):08x}{len(body):08x}"')
        return self.cacheable(scope, catalogue[1], catalogue[2])

    def daily(self, scope: Scope, param: str | None) -> Reply:
        """The puzzle of the day (``date``, default today in UTC or in the zone ``tz``; up to one day ahead),
        cached until that day ends (in that zone)."""
        pool, index, max_age = self.daily_choice(scope)
        self.runtime.activity.record("daily")
        return self.record(scope, pool, index, (b"cache-control", b"public, max-age=%d" % max_age))

    def daily_choice(self, scope: Scope) -> tuple[Pool, int, int]:
        """The pool, the puzzle of the day the query asks for, and the seconds its answer may be cached."""
        raw: bytes = scope["query_string"]
        params = queries(raw, DAILY_PARAMS) if raw else {}
        level = difficulty_level(params)
        now = self.clock()
        current = today(now, zone(params.get("tz")))
        utc_today = int(now // DAY)
        day = current.day
        asked = params.get("date")
        if asked is not None:
            day = day_number(asked)
            if day > utc_today + 1:
                raise NotFound(
                    f"no puzzle of the day for {asked} yet: dates up to one day after today (UTC) are served"
                )
        fewest, most, symmetry = clue_filters(params)
        pool = self.runtime.current()
        if fewest is None and most is None and symmetry is None:
            index = pool.daily(day, level)
        else:
            index = pool.daily_matching(day, Filters(level, min_clues=fewest, max_clues=most, symmetry=symmetry))
            if index is None:
                named = ", ".join(f"{name}={params[name]}" for name in DAILY_PARAMS[:4] if name in params)
                raise NotFound(f"no puzzle matches {named}")
        if index is None:
            name = DIFFICULTIES[level - 1] if level is not None else None
            raise NotFound(f"no {name} puzzle in the pool" if name else "the pool has no puzzle")
        # Today's (in the zone) and later days' until the end of their day (a new day is another puzzle); a
        # past day's long.
        if day >= current.day:
            max_age = max(1, int(current.ends_at + (day - current.day) * DAY - now))
        else:
            max_age = PAST_DAY_MAX_AGE
        return pool, index, max_age

    def puzzle(self, scope: Scope, param: str | None) -> Reply:
        pool, index = self.find(param)
        self.runtime.activity.record("by_id")
        return self.record(scope, pool, index)

    def solution(self, scope: Scope, param: str | None) -> Reply:
        pool, index = self.find(param)
        self.runtime.activity.record("solution")
        return self.cacheable(scope, pool.solution_body(index), pool.etag(index, solution=True))

    async def image(self, scope: Scope, param: str | None) -> Reply:
        # Absent means the default; present but empty is a mistake, as an empty `difficulty=` is.
        variant = image_choice(query(scope, "variant"), VARIANTS, VARIANT_ERROR)
        fmt = image_choice(query(scope, "format"), FORMATS, FORMAT_ERROR)
        size = image_size(query(scope, "size"))
        pool, index = self.find(param)
        self.runtime.activity.record("image_solution" if variant == "solution" else "image_puzzle")
        # The default (480 px PNG) is tagged by its variant alone, so the copies caches already hold still
        # revalidate to 304; every other representation names its format and size.
        tag = variant[0] if fmt == "png" and size == DEFAULT_SIZE else f"{variant[0]}-{fmt}-{size}"
        etag = f'{pool.etag(index)[:-1]}-{tag}"'
        if not_modified(scope, etag):
            # Answered before rendering: a revalidation costs no render, even after a cache eviction.
            return self.cacheable(scope, b"", etag)
        puzzle, solution = pool.puzzle(index), pool.solution(index)
        key = (pool.info.export_key, pool.info.loaded_at, index, variant, fmt, size)
        # Not held while the render waits: a sync's swap lets the old pool go once no request holds it.
        del pool
        runtime = self.runtime
        images, work = runtime.images, runtime.work
        if not images.covers(key):
            # Computed work: it costs the client more of its limit than a lookup, and runs in the work pool.
            await charge(scope, runtime.settings.cost_render)
        left = left_of(scope)
        try:
            data = await images.get(
                key, lambda: work.submit(render, fmt, puzzle, solution, variant, size, kind=fmt, left=left)
            )
        except (WorkQueueFull, WorkBudgetExceeded, WorkDropped) as exc:
            raise work_error(exc) from None
        return self.cacheable(scope, data, etag, IMAGE_TYPES[fmt])

    async def pool_exports(self, scope: Scope, param: str | None) -> Reply:
        try:
            body = await self.runtime.exports_body()
        except ListingUnavailable as exc:
            # Not logged here: the storage outage is logged once when it starts and once when it ends.
            raise ApiError(exc.message, status=503, headers={"Retry-After": str(exc.retry_after)}) from None
        self.runtime.activity.record("exports_listing")
        return json_reply(body)

    def openapi(self, scope: Scope, param: str | None) -> Reply:
        if gzip_accepted(scope):
            return Reply(200, [JSON, GZIP, VARY], self.openapi_gzip)
        return Reply(200, [JSON, VARY], self.openapi_body)


def technique_catalogue(pool: Pool) -> bytes:
    """``{"techniques": [...]}``: each technique of the grader's table (as the pool's pack holds it), in its
    order (easiest first, roughly), with the difficulty it implies, its step score and how many of
    ``pool``'s puzzles use it."""
    choices = pool.choices
    listed = [
        {
            "name": row.name,
            "difficulty": DIFFICULTIES[row.level - 1],
            "score": row.score,
            "puzzles": choices.technique_count(group),
        }
        for group, row in enumerate(choices.table, 1)
    ]
    return orjson.dumps({"techniques": listed})
