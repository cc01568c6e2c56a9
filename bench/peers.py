"""What the service is measured against: a bare ASGI app (the stack's limit), the service with fixed headers,
the service with a swap trigger, and Datasette over the same pool."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import orjson
from starlette.types import Receive, Scope, Send

from sudokupool.api.limiter import Refusal
from sudokupool.app import SudokuPool
from sudokupool.app import create_app as create_service
from sudokupool.loading.loader import load_latest
from support.servers import Server

# --- bare_app: the stack's limit ---------------------------------------------------------------------------------
# A bare ASGI app answering every request with one constant JSON body of BENCH_BODY_SIZE bytes (the harness sets a
# typical puzzle body's size), with a content-length, so the only difference from the service is the service's own
# work per request. BENCH_HEADERS (a JSON list of [name, value] pairs) replaces the content type with a whole set of
# headers: the service's own, so that a second bare app measures what writing them costs apart from computing them.

_SIZE = int(os.environ.get("BENCH_BODY_SIZE", "1000"))
_BODY = b'{"x":"' + b"x" * max(_SIZE - 8, 0) + b'"}'
_HEADERS = [(name.encode(), value.encode()) for name, value in json.loads(os.environ.get("BENCH_HEADERS", "[]"))]
_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [*(_HEADERS or [(b"content-type", b"application/json")]), (b"content-length", str(len(_BODY)).encode())],
}
_DONE = {"type": "http.response.body", "body": _BODY}


async def bare_app(scope: Scope, receive: Receive, send: Send) -> None:
    """Answer HTTP with the constant body; accept the lifespan protocol."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send(_START)
    await send(_DONE)


# --- fixed_headers_app: the spec's limit headers alone -----------------------------------------------------------
# The service with an /api/v2 limiter that counts nothing and always answers the same three X-RateLimit-* headers:
# what those headers cost the server, apart from the counting (python -m bench cpu-per-request and the harness).

HEADERS = [
    (b"x-ratelimit-limit", b"1000000000"),
    (b"x-ratelimit-remaining", b"999999999"),
    (b"x-ratelimit-reset", b"42"),
]


class FixedHeaders:
    """Stands in for :class:`~sudokupool.api.limiter.RateLimiter`: admits everything, counts nothing."""

    synchronous = True

    def __init__(self, exempt_paths: frozenset[str]) -> None:
        self.exempt_paths = exempt_paths

    def admit_now(self, scope: Scope) -> list[tuple[bytes, bytes]] | Refusal:
        return list(HEADERS)


def fixed_headers_app() -> SudokuPool:
    service = create_service()
    v2 = service.http.v2  # type: ignore[attr-defined]  # the /api/v2 router (see create_app)
    v2.limiter = FixedHeaders(v2.limiter.exempt_paths)
    return service


# --- swap_app: a swap under load --------------------------------------------------------------------------------
# The service with a trigger: GET /__bench/swap starts load_latest on the app's store and runtime.install in the
# background (what a live sync does) and answers at once; GET /__bench/swap-status answers {"done": bool,
# "seconds": float, "puzzles": int}, or {"done": true, "error": "..."} when the reload failed. The trigger makes
# the moment of a swap exact, which a sync interval would not. Never part of the service.


class SwapApp:
    def __init__(self, service: SudokuPool) -> None:
        self.service = service
        self.task: asyncio.Task[None] | None = None
        self.status: dict[str, object] = {"done": False, "seconds": 0.0, "puzzles": 0}

    async def reload(self) -> None:
        runtime = self.service.runtime
        assert runtime.store is not None
        started = time.perf_counter()
        try:
            pool, _ = await load_latest(runtime.store, background=True)
            await runtime.install(pool)  # as the live sync does
        except Exception as exc:  # the bench stops on it rather than waiting for a swap that never ends
            self.status = {"done": True, "error": repr(exc)}
            return
        self.status = {"done": True, "seconds": round(time.perf_counter() - started, 2), "puzzles": len(pool)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith("/__bench/"):
            if path == "/__bench/swap":
                self.status = {"done": False, "seconds": 0.0, "puzzles": 0}
                self.task = asyncio.create_task(self.reload())
            body = orjson.dumps(self.status)
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.service(scope, receive, send)


def swap_app() -> SwapApp:
    return SwapApp(create_service())


# --- datasette: the real peer ------------------------------------------------------------------------------------
# The pool published with Datasette from SQLite, as a user who just wanted an API would: the database made with
# sqlite-utils insert --nl --pk canonical_id from the export (nested fields become JSON text columns), served
# read-only (datasette -i, as datasette publish does) with one canned query for a random row.

RANDOM_SQL = "select * from puzzles where rowid = abs(random()) % (select max(rowid) from puzzles) + 1"
BY_ID = "/bench/puzzles/{id}.json?_shape=array"
RANDOM = "/bench/random.json?_shape=array"


def datasette_server(export: Path, log: Path) -> Server:
    """A Datasette server (not started) over the pool of ``export``: ``bench.db`` beside it, built when older than
    the export, and the canned query's metadata."""
    db, metadata = export.parent / "bench.db", export.parent / "datasette-metadata.json"
    metadata.write_text(json.dumps({"databases": {"bench": {"queries": {"random": {"sql": RANDOM_SQL}}}}}))
    if not db.exists() or db.stat().st_mtime < export.stat().st_mtime:
        part = db.with_name("bench.db.part")
        part.unlink(missing_ok=True)
        unzip = subprocess.Popen(["gzip", "-dc", str(export)], stdout=subprocess.PIPE)
        insert = ["sqlite-utils", "insert", str(part), "puzzles", "-", "--nl", "--pk", "canonical_id"]
        subprocess.run(insert, stdin=unzip.stdout, check=True)
        if unzip.wait() != 0:
            raise RuntimeError(f"gzip -dc {export} failed")
        part.rename(db)
    argv = ["datasette", "serve", "-i", str(db), "--metadata", str(metadata), "--host", "127.0.0.1", "--port", "{port}"]
    return Server("datasette", argv, probe="/bench.json", log=log)
