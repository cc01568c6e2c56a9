"""The handlers. Puzzle paths serve bytes the pool prepared at load; nothing is JSON-encoded per request."""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Final

import orjson
from starlette.requests import Request
from starlette.responses import Response

from sudokupool.errors import ApiError, BadRequest, NotFound
from sudokupool.export import DIFFICULTIES
from sudokupool.pool import Pool
from sudokupool.render import VARIANTS, render_png
from sudokupool.runtime import Runtime
from sudokupool.storage.base import StorageError
from sudokupool.sync import export_order

logger = logging.getLogger("sudokupool")

JSON: Final = "application/json"
NO_STORE: Final = {"cache-control": "no-store"}
DIFFICULTY_BY_FILTER: Final = {name.lower(): name for name in DIFFICULTIES}
DIFFICULTY_ERROR: Final = "difficulty must be one of easy, medium, hard, expert"
NO_PUZZLE: Final = "no puzzle has that id"
VARIANT_ERROR: Final = "variant must be one of puzzle, solution"


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison of an ``If-None-Match`` header against one ETag (RFC 9110, 13.1.2)."""
    if if_none_match.strip() == "*":
        return True
    opaque = etag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == opaque for part in if_none_match.split(","))


class Endpoints:
    """The API's handlers, bound to the app's :class:`Runtime`."""

    def __init__(self, runtime: Runtime, openapi_body: bytes) -> None:
        self.runtime = runtime
        self.openapi_body = openapi_body
        self.cache_control = f"public, max-age={runtime.settings.cache_max_age}"

    def cacheable(self, request: Request, body: bytes, etag: str, media_type: str = JSON) -> Response:
        """A response that caches may keep, answered with 304 when the client already has it."""
        headers = {"etag": etag, "cache-control": self.cache_control}
        if_none_match = request.headers.get("if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)

    def find(self, request: Request) -> tuple[Pool, int]:
        pool = self.runtime.current()
        index = pool.find(request.path_params["id"])
        if index is None:
            raise NotFound(NO_PUZZLE)
        return pool, index

    async def health(self, request: Request) -> Response:
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
        return Response(orjson.dumps(body), media_type=JSON, headers=NO_STORE)

    async def stats(self, request: Request) -> Response:
        return Response(self.runtime.current().stats_body, media_type=JSON, headers=NO_STORE)

    async def activity(self, request: Request) -> Response:
        return Response(orjson.dumps(await self.runtime.activity.snapshot_async()), media_type=JSON, headers=NO_STORE)

    async def random(self, request: Request) -> Response:
        difficulty = None
        value = request.query_params.get("difficulty")
        if value is not None:
            difficulty = DIFFICULTY_BY_FILTER.get(value.lower())
            if difficulty is None:
                raise BadRequest(DIFFICULTY_ERROR)
        pool = self.runtime.current()
        index = pool.pick(difficulty)
        if index is None:
            raise NotFound(f"no {difficulty} puzzle in the pool" if difficulty else "the pool has no puzzle")
        self.runtime.activity.record("random")
        return Response(pool.body(index), media_type=JSON, headers=NO_STORE)

    async def puzzle(self, request: Request) -> Response:
        pool, index = self.find(request)
        self.runtime.activity.record("by_id")
        return self.cacheable(request, pool.body(index), pool.etag(index))

    async def solution(self, request: Request) -> Response:
        pool, index = self.find(request)
        self.runtime.activity.record("solution")
        return self.cacheable(request, pool.solution_body(index), pool.etag(index, solution=True))

    async def image(self, request: Request) -> Response:
        variant = request.query_params.get("variant", "puzzle")
        if variant not in VARIANTS:
            raise BadRequest(VARIANT_ERROR)
        pool, index = self.find(request)
        self.runtime.activity.record("image_solution" if variant == "solution" else "image_puzzle")
        etag = f'{pool.etag(index)[:-1]}-{variant[0]}"'
        if_none_match = request.headers.get("if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            return Response(status_code=304, headers={"etag": etag, "cache-control": self.cache_control})
        puzzle, solution = pool.puzzle(index), pool.solution(index)
        key = (pool.info.export_key, pool.info.loaded_at, index, variant)
        png = await self.runtime.images.get(key, partial(render_png, puzzle, solution, variant))
        return self.cacheable(request, png, etag, media_type="image/png")

    async def pool_exports(self, request: Request) -> Response:
        try:
            body = await self.runtime.exports_body()
        except StorageError as exc:
            logger.warning("pool-exports: %s", exc)
            raise ApiError("the export listing is unavailable right now", status=503) from None
        self.runtime.activity.record("exports_listing")
        return Response(body, media_type=JSON, headers=NO_STORE)

    async def openapi(self, request: Request) -> Response:
        return Response(self.openapi_body, media_type=JSON)
