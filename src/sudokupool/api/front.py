"""The HTTP entry of the app: :class:`Front` sends each request on by its path's prefix."""

from __future__ import annotations

from functools import partial

from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from sudokupool.api.clientip import ClientAddresses
from sudokupool.api.cors import CORS
from sudokupool.api.dispatch import ApiRouter
from sudokupool.api.tally import UNMATCHED, RequestTally, Route
from sudokupool.logs import AccessLog


class Front:
    """The HTTP entry: CORS, the client's address, then the app for the path's prefix: ``/api/v2/*``,
    ``/api/v1/*``, other ``/api/*`` paths, and the site (the web page) for the rest.

    One ASGI layer that asks :class:`~sudokupool.api.cors.CORS` and :class:`~sudokupool.api.clientip.ClientAddresses`
    in turn, rather than a middleware layer each: every layer's coroutine costs time on every request
    (docs/benchmarks.md, "Figures the code's design rests on"), and the prefix tests are the cheapest router there
    is for these hot paths.
    """

    def __init__(
        self,
        *,
        v2: ASGIApp,
        v1: ASGIApp,
        unversioned: ASGIApp,
        site: ASGIApp,
        cors: CORS | None = None,
        addresses: ClientAddresses | None = None,
        access: AccessLog | None = None,
        tally: RequestTally | None = None,
        site_routes: list[BaseRoute] | None = None,
    ) -> None:
        self.v2 = v2
        self.v1 = v1
        self.unversioned = unversioned
        self.site = site
        self.cors = cors
        self.addresses = addresses if addresses is not None else ClientAddresses()
        self.access = access
        # With metrics on: the API routers count their own requests; the web page and preflights are
        # counted here, by the site's route templates (Starlette's) and the API router's.
        self.tally = tally
        self.site_routes = site_routes or []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.site(scope, receive, send)
            return
        cors = self.cors
        if cors is not None:
            # CORS first: preflights are answered before anything counts them against a rate limit.
            if scope["method"] == "OPTIONS" and cors.is_preflight(scope):
                if self.tally is None:
                    await cors.preflight(scope, send)
                else:
                    await self.tally.measure(self.route_of(scope), scope, partial(cors.preflight, scope), send)
                return
            if not scope["path"].startswith("/api/"):
                # The API routers add the headers themselves (create_app gives them CORS.headers).
                send = cors.wrap(send)
        # Before the routers, so the access log and the limiter see the same client.
        self.addresses.apply(scope)
        if self.access is not None:
            send = self.access.wrap(scope, send)
        path: str = scope["path"]
        if path.startswith("/api/"):
            if path.startswith("/api/v2/"):
                await self.v2(scope, receive, send)
            elif path.startswith("/api/v1/"):
                await self.v1(scope, receive, send)
            else:
                await self.unversioned(scope, receive, send)
        elif self.tally is None:
            await self.site(scope, receive, send)
        else:
            await self.tally.measure(self.route_of(scope), scope, partial(self.site, scope, receive), send)

    def route_of(self, scope: Scope) -> Route:
        """The metrics labels of a request: its surface and route template (never the raw path)."""
        path: str = scope["path"]
        if path.startswith("/api/"):
            app = (
                self.v2 if path.startswith("/api/v2/") else self.v1 if path.startswith("/api/v1/") else self.unversioned
            )
            if isinstance(app, ApiRouter):
                return app.route_of(path)
            return ("unversioned", UNMATCHED)
        for route in self.site_routes:
            match, _ = route.matches({**scope, "method": "GET"})
            if match is not Match.NONE:
                # Starlette's template: "/p/{canonical_id}", and "/static/{path}" for the mounted files.
                return ("site", getattr(route, "path_format", UNMATCHED))
        return ("site", UNMATCHED)
