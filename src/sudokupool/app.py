"""``create_app``: the one entry point (``uvicorn --factory sudokupool.app:create_app``).

Request flow (:class:`~sudokupool.api.front.Front`): CORS -> client address -> dispatch by prefix ->
``/api/v2`` (keys and limiter) | ``/api/v1`` | ``/api`` (puzzle paths) -> API router -> handler -> prepared
bytes; other paths -> the web page.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from sudokupool.activity import make_activity
from sudokupool.api.clientip import ClientAddresses
from sudokupool.api.cors import CORS
from sudokupool.api.dispatch import ApiRouter
from sudokupool.api.endpoints import Endpoints
from sudokupool.api.errors import JsonErrors, error_body, error_headers
from sudokupool.api.front import Front
from sudokupool.api.limiter import RateLimiter
from sudokupool.api.routes import UNLIMITED_PATHS, api_costs, api_routes, openapi_body, puzzle_routes
from sudokupool.api.tally import RequestTally
from sudokupool.config import Settings, SettingsError, listen_port, web_concurrency
from sudokupool.loading.loader import LoadError
from sudokupool.loading.sync import PoolSync
from sudokupool.logs import AccessLog, configure_service_logging, install_redaction
from sudokupool.pool.pool import Pool
from sudokupool.ratelimit import LimiterStore, Limits, make_store
from sudokupool.ratelimit.keys import Keyring
from sudokupool.services.outages import OutageLog, Probe, redis_outages
from sudokupool.serving.heap import freeze_startup_objects, one_heap
from sudokupool.serving.supervision import report_startup_failure, worker_started
from sudokupool.serving.tasks import Interrupted, until_signalled
from sudokupool.state import Runtime
from sudokupool.storage import open_store
from sudokupool.web.printsheet import print_routes
from sudokupool.web.site import STATIC_DIR, asset_version, web_routes

if TYPE_CHECKING:
    from sudokupool.metrics.endpoint import MetricsServer

EXPOSED_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "ETag"]


class SudokuPool:
    """The ASGI app: handles the lifespan itself (so a bad export is one clear log line, not a
    traceback) and hands HTTP to the Starlette stack."""

    def __init__(
        self,
        runtime: Runtime,
        http: ASGIApp,
        limiter: LimiterStore,
        access: AccessLog | None = None,
        metrics: MetricsServer | None = None,
    ) -> None:
        self.runtime = runtime
        self.http = http
        self.limiter = limiter
        self.access = access
        #: The metrics port (SUDOKUPOOL_METRICS_PORT), listening from startup to shutdown.
        self.metrics = metrics
        #: Why metrics cannot start (a one-line startup failure), found while building the app.
        self.metrics_error: str | None = None
        # Set by startup when it loads the pool itself: the startup retries and the live sync loop.
        self.sync: PoolSync | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        else:
            await self.http(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    # Under `sudokupool serve` the launcher prints the reason once, whatever the number of
                    # workers (sudokupool.serving.supervision); otherwise the server logs this message as the one
                    # line explaining the failed startup, and exits non-zero. Anything else escaping here
                    # would make uvicorn decide the app has no lifespan ("ASGI 'lifespan' protocol appears
                    # unsupported") and serve 500s without a pool.
                    reason = _startup_failure(exc)
                    reported = report_startup_failure(reason)
                    await send({"type": "lifespan.startup.failed", "message": "" if reported else reason})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def startup(self) -> None:
        """Open the store and load the newest export (see :class:`PoolSync`), then start live sync.

        An injected pool (``create_app(pool=...)``) is served as is: nothing is loaded or synced.
        """
        runtime = self.runtime
        # The modules and the app live as long as the process: later collections need not visit them (no pool is
        # loaded yet, so none is kept from the collector).
        freeze_startup_objects()
        await self.start_metrics()
        if runtime.store is None:
            try:
                runtime.store = open_store(runtime.settings.exports_source, runtime.settings)
            except ValueError as exc:
                # A malformed s3:// URL is an operator error: one line, no traceback.
                raise LoadError(f"SUDOKUPOOL_EXPORTS: {exc}") from None
        if runtime.pool is None:
            self.sync = PoolSync(runtime)
            try:
                await until_signalled(self.sync.load_initial())
            except Interrupted as exc:
                await runtime.store.close()
                raise LoadError(f"{exc} while loading the pool from {runtime.store.description}") from None
            except LoadError:
                await runtime.store.close()
                raise
            self.sync.start()
        await runtime.activity.start()

    async def start_metrics(self) -> None:
        """Listen on the metrics port first: a port that cannot be used stops startup before any loading."""
        if self.metrics_error is not None:
            raise LoadError(self.metrics_error)
        metrics = self.metrics
        if metrics is None:
            return
        try:
            await metrics.start()
        except OSError as exc:
            where = f"{metrics.host}:{metrics.port}"
            raise LoadError(
                f"SUDOKUPOOL_METRICS_PORT={metrics.port}: cannot listen on {where}: {exc.strerror}"
            ) from None
        metrics.exporter.start()

    async def shutdown(self) -> None:
        # First, so the activity counter's final flush runs while everything else is still up.
        await self.runtime.activity.aclose()
        if self.sync is not None:
            await self.sync.stop()
        await self.runtime.listing.aclose()
        if self.runtime.store is not None:
            await self.runtime.store.close()
        await self.limiter.aclose()
        await self.runtime.work.aclose()
        if self.access is not None:
            self.access.flush()
        if self.metrics is not None:
            await self.metrics.exporter.stop()
            await self.metrics.stop()


def _startup_failure(exc: Exception) -> str:
    if isinstance(exc, LoadError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "startup failed: out of memory (MemoryError)"
    detail = " ".join(str(exc).split())
    return f"startup failed: {type(exc).__name__}{': ' + detail if detail else ''}"


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    message = {404: "not found", 405: "method not allowed"}.get(status, "error")
    body = error_body(message)
    headers = {k.decode(): v.decode() for k, v in error_headers(body)}
    if isinstance(exc, HTTPException) and exc.headers:
        headers.update(exc.headers)
    return Response(body, status_code=status, headers=headers)


def create_app(
    settings: Settings | None = None, *, pool: Pool | None = None, clock: Callable[[], float] | None = None
) -> SudokuPool:
    """Build the app. ``settings`` default to the environment; ``pool`` skips loading (tests, benchmarks);
    ``clock`` (seconds since the epoch) is the day the puzzle of the day is for (tests).

    With settings from the environment (the server's factory call), a bad setting is one line on
    stderr and exit status 2, before the server logs anything. Given ``settings`` that are wrong
    (a bad key entry), :class:`SettingsError` is raised.
    """
    # A worker of `sudokupool serve` dies with its launcher (sudokupool.serving.supervision).
    worker_started()
    # One heap for every thread started from here on (sudokupool.serving.heap), where `sudokupool serve`'s
    # MALLOC_ARENA_MAX=1 is not in force (one process, another launcher): what loading's threads free can then be
    # given back.
    one_heap()
    if settings is not None:
        return _build(settings, pool, clock)
    try:
        settings = Settings.from_environ(os.environ)
        # The server was given PORT on its command line (the Procfile's `--port $PORT`); uvicorn would
        # bind 99999 modulo 65536 without a word, so a port out of range is refused here.
        listen_port(os.environ, settings)
        return _build(settings, pool, clock)
    except SettingsError as exc:
        print(f"sudokupool: {exc}", file=sys.stderr, flush=True)
        # SystemExit rather than an exception the server would print with a traceback: uvicorn lets it
        # end the process with this status.
        raise SystemExit(2) from None


def _build(settings: Settings, pool: Pool | None, clock: Callable[[], float] | None = None) -> SudokuPool:
    configure_service_logging(settings.log_level, settings.log_format, workers=_workers())
    # A server started from its own command line configures its loggers itself: add the redaction here.
    install_redaction()
    install_redaction("granian.access")
    access = AccessLog(json=settings.log_format == "json") if settings.access_log else None
    runtime = Runtime(settings, pool=pool)
    # One log of Redis outages for both users of Redis: an outage is one line when it starts, one when it ends,
    # which a PING finds out when the server answers again.
    outages = redis_outages(probe=_redis_probe(settings))
    runtime.activity = make_activity(settings, outages=outages)
    endpoints = Endpoints(runtime, openapi_body(), clock=clock or time.time)
    limiter_store = make_store(settings, outages=outages)
    tally = RequestTally() if settings.metrics_port is not None else None
    limiter = RateLimiter(
        store=limiter_store,
        keyring=Keyring.from_settings(settings),
        limits=Limits.from_settings(settings),
        exempt_paths=UNLIMITED_PATHS,
    )
    limiter.counting = tally is not None
    # The limiter is asked before the handler: 404, 405 and 500 count and carry the limit headers too.
    cors = CORS(expose=EXPOSED_HEADERS, allow_headers=["X-API-Key", "If-None-Match"])
    v2 = ApiRouter(
        "/api/v2", api_routes(endpoints), limiter=limiter, tally=tally, headers=cors.headers, costs=api_costs()
    )
    routes = [*web_routes(STATIC_DIR), *print_routes(runtime, asset_version(STATIC_DIR), limiter)]
    site = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    # Answer the path that was asked, not a redirect to a neighbouring one.
    site.router.redirect_slashes = False
    http = Front(
        v2=v2,
        v1=ApiRouter("/api/v1", api_routes(endpoints), tally=tally, headers=cors.headers),
        unversioned=ApiRouter("/api", puzzle_routes(endpoints), tally=tally, headers=cors.headers),
        # Starlette's static files answer some errors in plain text (a bad Range): JSON like every other.
        site=JsonErrors(site),
        cors=cors,
        addresses=ClientAddresses(trusted_hops=settings.trusted_proxy_hops),
        access=access,
        tally=tally,
        site_routes=routes,
    )
    app = SudokuPool(runtime, http, limiter_store, access)
    if tally is not None:
        metrics_server(app, limiter, tally, outages)
    return app


def _workers() -> int:
    """The number of workers of this server (``WEB_CONCURRENCY``)."""
    try:
        return web_concurrency(os.environ)
    except SettingsError:
        # The launcher refused a bad value already; a server started some other way counts as one worker.
        return 1


def _redis_probe(settings: Settings) -> Probe | None:
    if not settings.redis_url:
        return None
    # Imported here so a process-local deployment never imports redis-py.
    from sudokupool.services.redisclient import pinger

    return pinger(settings.redis_url, timeout=settings.redis_timeout, mode=settings.redis_mode)


def metrics_server(app: SudokuPool, limiter: RateLimiter, tally: RequestTally, outages: OutageLog) -> None:
    """Give ``app`` its metrics port (prometheus-client is imported only when metrics are on)."""
    from sudokupool.metrics.endpoint import MetricsServer
    from sudokupool.metrics.exporter import Exporter, Sources
    from sudokupool.metrics.workers import MULTIPROC_DIR

    settings = app.runtime.settings
    assert settings.metrics_port is not None
    directory = os.environ.get(MULTIPROC_DIR) or None
    workers = _workers()
    if workers > 1 and directory is None:
        app.metrics_error = (
            f"SUDOKUPOOL_METRICS_PORT with WEB_CONCURRENCY={workers}: start the server with `sudokupool serve`, "
            f"which prepares {MULTIPROC_DIR} so that one scrape covers every worker"
        )
        return
    store = limiter.store
    sources = Sources(
        runtime=app.runtime,
        tally=tally,
        limiter=limiter,
        storage_down=lambda: app.runtime.storage_outage.down,
        redis_nodes=outages.states,
        redis_fallbacks=lambda: int(getattr(store, "fallbacks", 0)),
    )
    exporter = Exporter(sources, multiprocess_dir=directory)
    host = settings.metrics_host or settings.host
    app.metrics = MetricsServer(exporter, host, settings.metrics_port, shared=directory is not None)
