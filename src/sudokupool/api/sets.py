"""``/api/v2/puzzles?count=N``: a set of distinct puzzles, in a seeded order that pages without repeats.

A set is ``count`` consecutive positions (from ``offset``) of one order of the puzzles matching the filters of
``random``: the order ``seed`` gives (``pool/shuffle.py``), the same on every instance and worker serving
the export. Without a seed one is drawn at random, and the body names it, so the next page can be asked for.
The body is one gzip member spliced from the records' own compressed bodies (``Pool.joined_member``): a set
costs no inflate or deflate of a record for a client that takes gzip, and one inflate of the whole for one
that does not.

A set costs the rate limit :func:`set_cost` requests: one for every ten puzzles asked (rounded up), so
one for ten or fewer, five for fifty.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Final

from isal import isal_zlib
from starlette.types import Scope

from sudokupool.api.compression import GZIP, VARY, gzip_accepted
from sudokupool.api.endpoints import JSON, NO_STORE, Reply
from sudokupool.api.errors import ApiError, BadRequest
from sudokupool.api.query import MAX_SEED, queries, random_query
from sudokupool.pool.pool import DamagedRecord

if TYPE_CHECKING:
    from sudokupool.api.endpoints import Endpoints

#: The most puzzles a set holds.
MAX_COUNT: Final = 50
#: Puzzles in a set when ``count`` is not given.
DEFAULT_COUNT: Final = 10
#: Puzzles a set has per request it costs of the rate limit.
PUZZLES_PER_REQUEST: Final = 10
#: The largest ``offset``: past every pool's size.
MAX_OFFSET: Final = 10**9
COUNT_ERROR: Final = f"count must be a whole number from 1 to {MAX_COUNT}"
OFFSET_ERROR: Final = f"offset must be a whole number from 0 to {MAX_OFFSET}"
_WBITS: Final = 31


def _count(value: str | None) -> int:
    if value is None:
        return DEFAULT_COUNT
    if not (0 < len(value) <= 2 and value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_COUNT:
        raise BadRequest(COUNT_ERROR)
    return int(value)


def set_cost(scope: Scope) -> int:
    """Requests of the rate limit a set costs: ``ceil(count / 10)`` (1 when ``count`` is absent or bad: the
    handler answers that with a 400)."""
    raw: bytes = scope["query_string"]
    if b"count" not in raw:
        return 1
    try:
        count = _count(queries(raw, ("count",)).get("count"))
    except BadRequest:
        return 1
    return -(-count // PUZZLES_PER_REQUEST)


def puzzle_set(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """``count`` distinct puzzles matching ``random``'s filters, from ``offset`` in the order of ``seed``."""
    raw: bytes = scope["query_string"]
    params = queries(raw, ("count", "offset", "seed")) if raw else {}
    count = _count(params.get("count"))
    offset = 0
    asked_offset = params.get("offset")
    if asked_offset is not None:
        if not (0 < len(asked_offset) <= 10 and asked_offset.isascii() and asked_offset.isdigit()):
            raise BadRequest(OFFSET_ERROR)
        offset = int(asked_offset)
        if offset > MAX_OFFSET:
            raise BadRequest(OFFSET_ERROR)
        if "seed" not in params:
            raise BadRequest("offset needs a seed: without one every set is drawn afresh")
    asked = random_query(raw) if raw else None
    filters = asked.every_filter() if asked is not None else random_query(b"").every_filter()
    seed = asked.seed if asked is not None else None
    drawn = seed is None
    if seed is None:
        seed = secrets.randbelow(MAX_SEED + 1)
    pool = endpoints.runtime.current()
    indexes, total = pool.deal(filters, seed, offset, count)
    if not total:
        endpoints.nothing_matches(pool, filters, asked.asked if asked is not None else ())
    following = offset + len(indexes)
    head = b'{"seed":%d,"offset":%d,"next_offset":%s,"total":%d,"puzzles":[' % (
        seed,
        offset,
        b"%d" % following if following < total else b"null",
        total,
    )
    try:
        member = pool.joined_member(indexes, head, b",", b"]}")
    except DamagedRecord:  # logged once by the pool
        raise ApiError("a puzzle of this set has a damaged record in the served pack", status=500) from None
    for _ in indexes:
        endpoints.runtime.activity.record("random")
    # A drawn seed is a new set on every request; a given one is the same set for as long as the export is.
    cache = NO_STORE if drawn else endpoints.cache_control
    if gzip_accepted(scope):
        return Reply(200, [JSON, GZIP, VARY, cache], member)
    return Reply(200, [JSON, VARY, cache], isal_zlib.decompress(member, _WBITS))
