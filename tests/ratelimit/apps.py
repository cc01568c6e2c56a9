"""A small app wired like ``create_app`` wires the limiter, for tests that need no pool.

``create_test_app`` is also a uvicorn factory (``tests.ratelimit.apps:create_test_app``), reading
the settings from the environment as ``create_app`` does.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, Router

from sudokupool.clientip import ClientIPMiddleware
from sudokupool.config import Settings
from sudokupool.errors import ErrorMiddleware, NotFound
from sudokupool.keys import Keyring
from sudokupool.logs import install_redaction
from sudokupool.ratelimit import Limits, RateLimitMiddleware, make_store
from sudokupool.ratelimit.store import LimiterStore


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True, "client": request.client.host if request.client else None})


async def cached(request: Request) -> Response:
    if request.headers.get("if-none-match") == '"v1"':
        return Response(status_code=304, headers={"etag": '"v1"'})
    return JSONResponse({"cached": True}, headers={"etag": '"v1"'})


async def missing(request: Request) -> Response:
    raise NotFound("no puzzle has that id")


async def boom(request: Request) -> Response:
    raise RuntimeError("a bug")


def create_test_app(
    settings: Settings | None = None, *, store: LimiterStore | None = None, redact: bool = True
) -> Starlette:
    if settings is None:
        settings = Settings.from_environ(os.environ)
    if redact:
        install_redaction()
    routes = [
        Route("/health", health),
        Route("/cached", cached),
        Route("/missing", missing),
        Route("/boom", boom),
        Route("/openapi.json", health),
    ]
    limited = RateLimitMiddleware(
        ErrorMiddleware(Router(routes)),
        store=store if store is not None else make_store(settings),
        keyring=Keyring.from_settings(settings),
        limits=Limits.from_settings(settings),
        exempt_paths={"/api/v2/openapi.json"},
    )
    return Starlette(
        routes=[Mount("/api/v2", app=limited), Mount("/api/v1", app=ErrorMiddleware(Router(routes)))],
        middleware=[Middleware(ClientIPMiddleware, trusted_hops=settings.trusted_proxy_hops)],
    )


def create_test_app_without_redaction() -> Starlette:
    """For the test that the redaction comes from ``log_config`` alone."""
    return create_test_app(redact=False)
