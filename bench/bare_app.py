"""The stack's limit: a bare ASGI app answering every request with one constant JSON body.

    BENCH_BODY_SIZE=13000 uvicorn bare_app:app --app-dir bench --loop uvloop --http httptools --no-access-log

The body has the size of a typical puzzle body (the harness sets it), with the same content type and a
``content-length``, so the only difference from the service is the service's own work per request.
"""

from __future__ import annotations

import os

from starlette.types import Receive, Scope, Send

_SIZE = int(os.environ.get("BENCH_BODY_SIZE", "1000"))
_BODY = b'{"x":"' + b"x" * max(_SIZE - 8, 0) + b'"}'
_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(_BODY)).encode())],
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
