"""A small app wired like ``create_app`` wires the limiter, for tests that need no pool.

``create_test_app`` is also a uvicorn factory (``tests.ratelimit.apps:create_test_app``), reading
the settings from the environment as ``create_app`` does.
"""

from __future__ import annotations

import os

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from sudokupool.api.clientip import ClientAddresses
from sudokupool.api.dispatch import ApiRouter
from sudokupool.api.endpoints import JSON, Reply
from sudokupool.api.errors import NotFound, send_error
from sudokupool.api.front import Front
from sudokupool.api.limiter import RateLimiter
from sudokupool.api.query import header
from sudokupool.config import Settings
from sudokupool.logs import AccessLog, install_redaction
from sudokupool.ratelimit import Limits, make_store
from sudokupool.ratelimit.keys import Keyring
from sudokupool.ratelimit.store import LimiterStore


def health(scope: Scope, param: str | None) -> Reply:
    client = scope.get("client")
    return Reply(200, [JSON], orjson.dumps({"ok": True, "client": client[0] if client else None}))


def cached(scope: Scope, param: str | None) -> Reply:
    if header(scope, b"if-none-match") == '"v1"':
        return Reply(304, [(b"etag", b'"v1"')], b"")
    return Reply(200, [JSON, (b"etag", b'"v1"')], orjson.dumps({"cached": True}))


def missing(scope: Scope, param: str | None) -> Reply:
    raise NotFound("no puzzle has that id")


def boom(scope: Scope, param: str | None) -> Reply:
    raise RuntimeError("a bug")


def create_test_app(
    settings: Settings | None = None, *, store: LimiterStore | None = None, redact: bool = True
) -> ASGIApp:
    if settings is None:
        settings = Settings.from_environ(os.environ)
    if redact:
        install_redaction()
    routes = {"/health": health, "/cached": cached, "/missing": missing, "/boom": boom, "/openapi.json": health}
    limited = ApiRouter(
        "/api/v2",
        routes,
        limiter=RateLimiter(
            store=store if store is not None else make_store(settings),
            keyring=Keyring.from_settings(settings),
            limits=Limits.from_settings(settings),
            exempt_paths={"/api/v2/openapi.json"},
        ),
    )
    return Front(
        v2=limited,
        v1=ApiRouter("/api/v1", routes),
        unversioned=_not_found,
        site=_not_found,
        addresses=ClientAddresses(trusted_hops=settings.trusted_proxy_hops),
        # No lifespan here to flush a batch at shutdown: every line is written at once.
        access=AccessLog(batch=1) if settings.access_log else None,
    )


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await send_error(send, 404, "not found")


def create_test_app_without_redaction() -> ASGIApp:
    """For the test that the redaction comes from ``log_config`` alone."""
    return create_test_app(redact=False)
