"""The stack's limit: a bare ASGI app answering every request with one constant JSON body.

    BENCH_BODY_SIZE=13000 uvicorn bare_app:app --app-dir bench --loop uvloop --http httptools --no-access-log

The body has the size of a typical puzzle body (the harness sets it), with the same content type and a
``content-length``, so the only difference from the service is the service's own work per request.
``BENCH_HEADERS`` (a JSON list of ``[name, value]`` pairs) replaces the content type with a whole set of
headers: the harness passes the service's own response headers, so a second bare app measures what
writing those headers costs the server, apart from the work that computes them.
"""

from __future__ import annotations

import json
import os

from starlette.types import Receive, Scope, Send

_SIZE = int(os.environ.get("BENCH_BODY_SIZE", "1000"))
_BODY = b'{"x":"' + b"x" * max(_SIZE - 8, 0) + b'"}'
_HEADERS = [(name.encode(), value.encode()) for name, value in json.loads(os.environ.get("BENCH_HEADERS", "[]"))]
_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [*(_HEADERS or [(b"content-type", b"application/json")]), (b"content-length", str(len(_BODY)).encode())],
}
_DONE = {"type": "http.response.body", "body": _BODY}


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """Answer HTTP with the constant body; accept the lifespan protocol."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send(_START)
    await send(_DONE)
