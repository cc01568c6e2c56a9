"""The handlers. Puzzle paths serve bytes the pool prepared at load; nothing is JSON-encoded per request.

A record goes out as the gzip member the pool holds when the client's ``Accept-Encoding`` allows it,
and is inflated for the others; both carry ``Vary: Accept-Encoding`` and the record's one weak ETag.
Short bodies (solutions, stats) and error bodies are always identity.

A handler takes the ASGI scope and the path's id (or None) and returns a :class:`Reply`; the router in
``router.py`` sends it. Client errors are raised as :class:`~sudokupool.api.errors.ApiError`. Handlers work
on the raw scope rather than Starlette's ``Request``/``Response`` objects: these are the hot paths, and
the objects cost more than the rest of the request.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Final, NamedTuple, NoReturn, TypeVar
from urllib.parse import unquote_plus
from zlib import crc32

import orjson
from starlette.types import Scope

from sudokupool.api.compression import accepts_gzip
from sudokupool.api.computed import charge, left_of, work_error
from sudokupool.api.conditional import etag_matches
from sudokupool.api.days import day_number, today, zone
from sudokupool.api.errors import ApiError, BadRequest, NotFound
from sudokupool.images.render import DEFAULT_SIZE, FORMATS, MAX_SIZE, MEDIA_TYPES, MIN_SIZE, VARIANTS, Format, render
from sudokupool.listing import ListingUnavailable
from sudokupool.loading.choose import DAY, Filters
from sudokupool.loading.gzip_member import compress
from sudokupool.loading.pool import DamagedRecord, Pool
from sudokupool.state import Runtime
from sudokupool.storage.naming import export_order
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES
from sudokupool.work import WorkBudgetExceeded, WorkDropped, WorkQueueFull

Header = tuple[bytes, bytes]
Choice = TypeVar("Choice", bound=str)
JSON: Final[Header] = (b"content-type", b"application/json")
NO_STORE: Final[Header] = (b"cache-control", b"no-store")
GZIP: Final[Header] = (b"content-encoding", b"gzip")
#: On every response whose encoding was negotiated, identity ones too, so shared caches key by it.
VARY: Final[Header] = (b"vary", b"Accept-Encoding")
DIFFICULTY_BY_FILTER: Final = {name.lower(): name for name in DIFFICULTIES}
DIFFICULTY_ERROR: Final = "difficulty must be one of easy, medium, hard, expert"
VARIANT_ERROR: Final = "variant must be one of puzzle, solution"
FORMAT_ERROR: Final = f"format must be one of {', '.join(FORMATS)}"
SIZE_ERROR: Final = f"size must be a whole number of pixels from {MIN_SIZE} to {MAX_SIZE}"
IMAGE_TYPES: Final[dict[Format, Header]] = {fmt: (b"content-type", t.encode()) for fmt, t in MEDIA_TYPES.items()}
NO_PUZZLE: Final = "no puzzle has that id"
DIFFICULTY_LEVEL_BY_FILTER: Final = {name.lower(): level for level, name in enumerate(DIFFICULTIES, 1)}
#: The query parameters of ``random``; any other (``api_key`` among them) is not a filter.
RANDOM_FILTERS: Final = (
    "difficulty",
    "technique",
    "stars",
    "min_score",
    "max_score",
    "min_clues",
    "max_clues",
    "symmetry",
)
#: What the puzzle of the day reads of its query string.
_DAILY_PARAMS: Final = ("difficulty", "min_clues", "max_clues", "symmetry", "date", "tz")
#: What ``random`` reads of its query string: the filters and ``seed``.
_RANDOM_PARAMS: Final = (*RANDOM_FILTERS, "seed")
SYMMETRY_BY_FILTER: Final = {name: code for code, name in enumerate(SYMMETRIES)}
SYMMETRY_ERROR: Final = f"symmetry must be one of {', '.join(SYMMETRIES)}"
CLUES_ERROR: Final = "{} must be a whole number from 0 to 81"
#: The largest seed: every seed a JavaScript number holds exactly.
MAX_SEED: Final = 2**53 - 1
SEED_ERROR: Final = f"seed must be a whole number from 0 to {MAX_SEED}"
TECHNIQUE_ERROR: Final = "unknown technique {!r}: the names are listed at /api/v2/techniques"
STARS_ERROR: Final = "stars must be an integer from 1 to 5"
_INTEGER: Final = re.compile(r"-?[0-9]{1,15}")
#: ``max-age`` of the puzzle of a day that is over: nothing schedules a past day any more.
PAST_DAY_MAX_AGE: Final = 86_400
DAMAGED: Final = "this puzzle's record is damaged in the served pack"


class Reply(NamedTuple):
    """A complete response: status, headers (without Content-Length) and body."""

    status: int
    headers: list[Header]
    body: bytes


Handler = Callable[[Scope, str | None], Reply]
AsyncHandler = Callable[[Scope, str | None], Awaitable[Reply]]


def header(scope: Scope, name: bytes) -> str | None:
    """Every request header line called ``name`` (lower case) as one list (joined with ", "), as latin-1.

    A list-valued field (``If-None-Match``, ``Accept-Encoding``) may come as several lines; RFC 9110
    (5.3) makes them one value joined by commas. None when there is no such line.
    """
    found: str | None = None
    for key, value in scope["headers"]:
        if key == name:
            text = bytes(value).decode("latin-1")
            found = text if found is None else f"{found}, {text}"
    return found


def gzip_accepted(scope: Scope) -> bool:
    """Whether the client takes a gzip-coded body (see :func:`~sudokupool.api.compression.accepts_gzip`)."""
    return accepts_gzip(header(scope, b"accept-encoding"))


def query(scope: Scope, name: str) -> str | None:
    """The first query parameter called ``name`` (what ``parse_qsl(..., keep_blank_values=True)`` gives).

    Split by hand: ``parse_qsl`` cost 1.1 us of a 7 us filtered pick; only parts with ``%`` or ``+``
    go through ``unquote_plus``.
    """
    raw: bytes = scope["query_string"]
    if not raw or name.encode() not in raw:
        return None
    return queries(raw, (name,)).get(name)


def queries(raw: bytes, names: tuple[str, ...]) -> dict[str, str]:
    """The first value of each query parameter in ``names`` that the query string ``raw`` has, in one pass
    (see :func:`query`)."""
    found: dict[str, str] = {}
    for part in raw.decode("latin-1").split("&"):
        key, _, value = part.partition("=")
        if "%" in key or "+" in key:
            key = unquote_plus(key)
        if key in names and key not in found:
            found[key] = unquote_plus(value) if "%" in value or "+" in value else value
    return found


def _integer(params: dict[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if not _INTEGER.fullmatch(value):
        raise BadRequest(f"{name} must be an integer of at most 15 digits")
    return int(value)


def _clues(params: dict[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if not (0 < len(value) <= 2 and value.isascii() and value.isdigit()) or int(value) > 81:
        raise BadRequest(CLUES_ERROR.format(name))
    return int(value)


def clue_filters(params: dict[str, str]) -> tuple[int | None, int | None, int | None]:
    """``min_clues``, ``max_clues`` and ``symmetry`` (its position in ``SYMMETRIES``) of ``params``, checked."""
    fewest, most = _clues(params, "min_clues"), _clues(params, "max_clues")
    if fewest is not None and most is not None and fewest > most:
        raise BadRequest("min_clues must not be above max_clues")
    symmetry = None
    named = params.get("symmetry")
    if named is not None:
        symmetry = SYMMETRY_BY_FILTER.get(named.lower())
        if symmetry is None:
            raise BadRequest(SYMMETRY_ERROR)
    return fewest, most, symmetry


def seed_of(value: str | None) -> int | None:
    """The ``seed`` parameter: ASCII digits, 0 to :data:`MAX_SEED`; None when absent. Else :class:`BadRequest`."""
    if value is None:
        return None
    if not (0 < len(value) <= 16 and value.isascii() and value.isdigit()) or int(value) > MAX_SEED:
        raise BadRequest(SEED_ERROR)
    return int(value)


class RandomQuery(NamedTuple):
    """``random``'s query string, checked: the difficulty's name, the filters (None when only a difficulty
    or nothing is asked for), the filters as asked, for the messages, the difficulty's level and the seed."""

    difficulty: str | None
    filters: Filters | None
    asked: tuple[tuple[str, str], ...]
    level: int | None = None
    seed: int | None = None

    def every_filter(self) -> Filters:
        """The filters, the difficulty alone included, as :class:`Filters`."""
        return self.filters if self.filters is not None else Filters(self.level)


def random_query(raw: bytes) -> RandomQuery:
    """Parse and check ``random``'s query string; raise :class:`BadRequest` naming the first bad value.

    Memoized by the raw bytes (:data:`KEPT_QUERY_BYTES` at most): a client asks the same query again and
    again, and unquoting and checking it took longer than the pick. A bad query is not kept (an exception is
    never cached), nor a longer one: a thousand long ones would hold megabytes."""
    return _kept_query(raw) if len(raw) <= KEPT_QUERY_BYTES else _random_query(raw)


#: The longest query string :func:`random_query` keeps: every filter at once, a long technique name escaped.
KEPT_QUERY_BYTES: Final = 256


def _random_query(raw: bytes) -> RandomQuery:
    params = queries(raw, _RANDOM_PARAMS)
    difficulty = level = None
    value = params.get("difficulty")
    if value is not None:
        difficulty = DIFFICULTY_BY_FILTER.get(value.lower())
        if difficulty is None:
            raise BadRequest(DIFFICULTY_ERROR)
        level = DIFFICULTY_LEVEL_BY_FILTER[value.lower()]
    stars = params.get("stars")
    if stars is not None and (len(stars) != 1 or stars not in "12345"):
        raise BadRequest(STARS_ERROR)
    low, high = _integer(params, "min_score"), _integer(params, "max_score")
    if low is not None and high is not None and low > high:
        raise BadRequest("min_score must not be above max_score")
    fewest, most, symmetry = clue_filters(params)
    seed = seed_of(params.get("seed"))
    technique = params.get("technique")
    asked = tuple((name, params[name]) for name in RANDOM_FILTERS if name in params)
    if all(value is None for value in (technique, stars, low, high, fewest, most, symmetry)):
        return RandomQuery(difficulty, None, asked, level, seed)
    filters = Filters(
        level, None if stars is None else int(stars), technique and technique.lower(), low, high, fewest, most, symmetry
    )
    return RandomQuery(difficulty, filters, asked, level, seed)


_kept_query: Final = lru_cache(maxsize=1024)(_random_query)


def json(body: bytes) -> Reply:
    """An uncacheable JSON reply."""
    return Reply(200, [JSON, NO_STORE], body)


def image_choice(value: str | None, allowed: tuple[Choice, ...], error: str) -> Choice:
    """``value`` (any case) as one of ``allowed``, the first of them when absent; else :class:`BadRequest`."""
    if value is None:
        return allowed[0]
    lowered = value.lower()
    for choice in allowed:
        if choice == lowered:
            return choice
    raise BadRequest(error)


def image_size(value: str | None) -> int:
    """The ``size`` parameter: ASCII digits within ``MIN_SIZE``..``MAX_SIZE``, ``DEFAULT_SIZE`` when absent."""
    if value is None:
        return DEFAULT_SIZE
    # At most 4 digits before int(): no signs, spaces, underscores or other scripts' digits, and no huge numbers.
    if not (0 < len(value) <= 4 and value.isascii() and value.isdigit()):
        raise BadRequest(SIZE_ERROR)
    size = int(value)
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise BadRequest(SIZE_ERROR)
    return size


def difficulty_level(params: dict[str, str]) -> int | None:
    """The level of the query's ``difficulty`` (any case), None when it has none; a 400 for another name."""
    difficulty = params.get("difficulty")
    if difficulty is None:
        return None
    level = DIFFICULTY_LEVEL_BY_FILTER.get(difficulty.lower())
    if level is None:
        raise BadRequest(DIFFICULTY_ERROR)
    return level


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
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            return Reply(304, headers, b"")
        return Reply(200, [content_type, *headers], body)

    def record(self, scope: Scope, pool: Pool, index: int, cache_control: Header | None = None) -> Reply:
        """Puzzle ``index``'s record, cacheable (``cache_control``, default the setting's): gzip as held or
        inflated, one weak ETag for both.

        A 304 carries the ETag and Vary a 200 would, and costs no inflate.
        """
        etag = pool.etag(index)
        headers = [(b"etag", etag.encode()), cache_control or self.cache_control, VARY]
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            return Reply(304, headers, b"")
        try:
            if gzip_accepted(scope):
                return Reply(200, [JSON, GZIP, *headers], pool.gzip_body(index))
            return Reply(200, [JSON, *headers], pool.body(index))
        except DamagedRecord:  # logged once by the pool
            raise ApiError(DAMAGED, status=500) from None

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
        return json(orjson.dumps(body))

    def stats(self, scope: Scope, param: str | None) -> Reply:
        return json(self.runtime.current().stats_body)

    async def activity(self, scope: Scope, param: str | None) -> Reply:
        return json(orjson.dumps(await self.runtime.activity.snapshot_async()))

    def random(self, scope: Scope, param: str | None) -> Reply:
        raw: bytes = scope["query_string"]
        asked = random_query(raw) if raw else None
        pool = self.runtime.current()
        index = self.random_index(pool, asked)
        self.runtime.activity.record("random")
        try:
            if gzip_accepted(scope):
                return Reply(200, [JSON, GZIP, VARY, NO_STORE], pool.gzip_body(index))
            return Reply(200, [JSON, VARY, NO_STORE], pool.body(index))
        except DamagedRecord:  # logged once by the pool
            raise ApiError(DAMAGED, status=500) from None

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
        params = queries(raw, _DAILY_PARAMS) if raw else {}
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
                named = ", ".join(f"{name}={params[name]}" for name in _DAILY_PARAMS[:4] if name in params)
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
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
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
        return json(body)

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
