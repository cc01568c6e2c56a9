"""The HTTP server: how ``sudokupool serve`` (and so the Procfile, which runs it) starts uvicorn or granian.

:class:`Launch` is everything the server is started with, read from the settings and the platform's
``PORT`` and ``WEB_CONCURRENCY``. :func:`uvicorn_options` and :func:`granian_argv` turn it into each
server's configuration with the same bounds:

- a request head (request line and headers) over ``SUDOKUPOOL_MAX_HEADER_BYTES`` is answered 431;
- a connection that sends nothing is closed after ``SUDOKUPOOL_FIRST_REQUEST_TIMEOUT`` seconds;
- a shutdown (SIGTERM) lets requests in flight finish and takes at most ``SUDOKUPOOL_SHUTDOWN_TIMEOUT``
  seconds; connections still busy then are closed;
- the server never rewrites the client address from forwarded headers (:mod:`sudokupool.api.clientip` does)
  and, on uvicorn, sends no ``Server`` header.

On uvicorn the bounds and the quiet handling of clients that hang up live in
:class:`BoundedHttpToolsProtocol`; granian has flags for all but the ``Server`` header. The access log is
the app's own (:class:`sudokupool.logs.AccessLog`), the same on both servers.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from sudokupool import supervision
from sudokupool.config import Settings, _int, listen_port, parse_value
from sudokupool.logs import granian_log_config, json_line, log_config
from sudokupool.metrics.workers import cleanup, prepare

APP = "sudokupool.app:create_app"
SERVERS = ("uvicorn", "granian")


@dataclass(frozen=True)
class Launch:
    """How to start the server; :func:`launch` builds it."""

    server: str
    host: str
    port: int
    workers: int
    log_level: str
    max_header_bytes: int
    first_request_timeout: float
    shutdown_timeout: float
    app: str = APP
    metrics_port: int | None = None
    metrics_host: str = ""
    log_format: str = "plain"


def launch(settings: Settings, environ: Mapping[str, str], *, host: str | None = None, port: int | None = None,
           app: str = APP) -> Launch:  # fmt: skip
    """The launch for ``settings``; ``PORT`` and ``WEB_CONCURRENCY`` come from ``environ`` (Procfile platforms).
    A bad ``WEB_CONCURRENCY`` raises :class:`~sudokupool.config.SettingsError` (one line, exit status 2)."""
    if port is None:
        port = listen_port(environ, settings)
    raw = environ.get("WEB_CONCURRENCY")
    workers: int = parse_value("WEB_CONCURRENCY", raw, _int(1)) if raw else 1
    return Launch(
        server=settings.server,
        host=host or settings.host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
        max_header_bytes=settings.max_header_bytes,
        first_request_timeout=settings.first_request_timeout,
        shutdown_timeout=settings.shutdown_timeout,
        app=app,
        metrics_port=settings.metrics_port,
        metrics_host=settings.metrics_host,
        log_format=settings.log_format,
    )


def uvicorn_options(launch: Launch) -> dict[str, Any]:
    """Keyword arguments of ``uvicorn.run`` for ``launch``."""
    return {
        "app": launch.app,
        "factory": True,
        "host": launch.host,
        "port": launch.port,
        "workers": launch.workers,
        "loop": "uvloop",
        "http": BoundedHttpToolsProtocol,
        # The client address is ours to work out (SUDOKUPOOL_TRUSTED_PROXY_HOPS), never uvicorn's.
        "proxy_headers": False,
        "server_header": False,
        # The servers' access logs stay off: the app writes its own (sudokupool.logs.AccessLog).
        "access_log": False,
        "log_level": launch.log_level,
        "log_config": log_config(launch.log_level, launch.log_format),
        # A backstop only: the protocol closes connections still busy at the shutdown timeout.
        "timeout_graceful_shutdown": launch.shutdown_timeout + 1,
    }


def granian_argv(launch: Launch) -> list[str]:
    """granian's command line for ``launch`` (its flags for the same bounds)."""
    exe = shutil.which("granian") or "granian"
    argv = [
        exe, "--interface", "asgi", "--factory", "--host", launch.host, "--port", str(launch.port),
        "--workers", str(launch.workers), "--loop", "uvloop", "--http", "1", "--no-ws",
        "--log-level", launch.log_level,
        # hyper refuses a request head larger than its read buffer with 431.
        "--http1-buffer-size", str(launch.max_header_bytes),
        # The time a connection has to send a whole request head, counted from its start.
        "--http1-header-read-timeout", str(round(launch.first_request_timeout * 1000)),
        "--workers-kill-timeout", str(max(1, round(launch.shutdown_timeout))),
        "--no-access-log",
    ]  # fmt: skip
    return [*argv, launch.app]


def serve(launch: Launch) -> int:
    """Run the server (uvicorn or granian, with its workers) in this process, the launcher; the exit code.

    The workers read their settings from the environment: the address the API binds travels as
    ``SUDOKUPOOL_HOST`` (the metrics port binds it too unless ``SUDOKUPOOL_METRICS_HOST`` says otherwise),
    and with metrics on and several workers, ``PROMETHEUS_MULTIPROC_DIR`` (see :mod:`sudokupool.metrics.workers`).
    A start that fails ends with one line, the reason, and :data:`~sudokupool.supervision.STARTUP_FAILED`;
    workers die with the launcher (see :mod:`sudokupool.supervision`).
    """
    problem = port_problem(launch)
    if problem is not None:
        print(f"sudokupool: {problem}", file=sys.stderr)
        return 2
    os.environ["SUDOKUPOOL_HOST"] = launch.host
    # granian's workers get SIGKILL when the launcher dies (see sudokupool.supervision), uvicorn's SIGTERM.
    death_signal = signal.SIGKILL if launch.server == "granian" else signal.SIGTERM
    supervised = supervision.Launch(os.environ, death_signal=death_signal)
    made = None
    status: int | str | None = 0
    try:
        if launch.metrics_port is not None:
            made = prepare(os.environ, launch.workers)
        try:
            if launch.server == "granian":
                _run_granian(launch)
            else:
                import uvicorn

                uvicorn.run(**uvicorn_options(launch))
        except SystemExit as exc:
            status = exc.code
        failure = supervised.failure()
    finally:
        cleanup(made)
        supervised.close()
    if failure is not None:
        sys.stdout.flush()
        line = json_line(failure) if launch.log_format == "json" else f"sudokupool: {failure}"
        print(line, file=sys.stderr, flush=True)
        return supervision.STARTUP_FAILED
    if isinstance(status, str):
        print(status, file=sys.stderr)
        return 1
    return status or 0


def _run_granian(launch: Launch) -> None:
    """granian's command line (:func:`granian_argv`), run in this process: its main process is the launcher,
    so the workers' parent is, and the launcher sees how the server ended."""
    from granian.cli import cli

    argv = granian_argv(launch)
    config = granian_log_config(launch.log_format)
    if config is None:
        cli.main(args=argv[1:], prog_name="granian", standalone_mode=False)
        return
    # granian reads a logging configuration from a file only.
    with tempfile.NamedTemporaryFile("w", prefix=supervision.temporary_name("logging"), suffix=".json") as file:
        json.dump(config, file)
        file.flush()
        cli.main(args=[*argv[1:-1], "--log-config", file.name, argv[-1]], prog_name="granian", standalone_mode=False)


def port_problem(launch: Launch) -> str | None:
    """Why the API's or the metrics' address cannot be listened on now (one line naming the setting), or
    None: found before the pool loads, which can take a while, rather than after."""
    where = f"{launch.host}:{launch.port}"
    problem = _bind_error(launch.host, launch.port)
    if problem is not None:
        return f"cannot listen on {where} (--host or SUDOKUPOOL_HOST, and PORT or SUDOKUPOOL_PORT): {problem}"
    if launch.metrics_port is None:
        return None
    if launch.metrics_port == launch.port:
        return f"SUDOKUPOOL_METRICS_PORT={launch.port} is the API's port; the metrics need a port of their own"
    host = launch.metrics_host or launch.host
    problem = _bind_error(host, launch.metrics_port)
    if problem is not None:
        return (
            f"SUDOKUPOOL_METRICS_PORT={launch.metrics_port}: cannot listen on {host}:{launch.metrics_port}: {problem}"
        )
    return None


def _bind_error(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound now, or None. The workers bind with ``SO_REUSEPORT``, which would
    let them share a port unnoticed with a process that did the same (another instance, same user): this
    bind, without it, finds such a process."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


# ---- uvicorn: the bounded protocol ----------------------------------------------------------------------


@dataclass(frozen=True)
class Bounds:
    max_header_bytes: int
    first_request_timeout: float
    shutdown_timeout: float


@cache
def bounds() -> Bounds:
    """This process's bounds, from the environment (a worker process reads what its parent was started with)."""
    settings = Settings.from_environ(os.environ)
    return Bounds(settings.max_header_bytes, settings.first_request_timeout, settings.shutdown_timeout)


def _too_large() -> bytes:
    body = b'{"error":"request header fields too large"}'
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body
    )


TOO_LARGE = _too_large()


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the service's bounds (see the module docstring).

    - Head size: the bytes since the end of the last head (``CRLF CRLF``) are counted across reads; past
      the limit the client gets 431 and the connection is closed. A request body counts too (the API
      takes none); within one read (at most 256 KiB), heads after the first are checked only when the
      read ends inside one.
    - A client that hangs up while pipelined requests are queued: every queued and running request is
      marked disconnected, so nothing writes to the closed transport (uvicorn logs that as an ERROR
      with a traceback).
    - Shutdown: as uvicorn's, the requests received are answered, the last with ``connection: close``;
      a connection still busy at the shutdown timeout (a client that does not read) is aborted.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds = bounds()
        self.head_bytes = 0
        self.running: RequestResponseCycle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # The keep-alive timer's slot: the first data received cancels it, as it does keep-alive's.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.bounds.first_request_timeout, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        # Two searches of the read, no parser callbacks: this runs for every request.
        limit = self.bounds.max_header_bytes
        last = data.rfind(b"\r\n\r\n")
        if last < 0:
            self.head_bytes += len(data)
        elif self.head_bytes + data.find(b"\r\n\r\n") > limit:
            self.head_bytes = limit + 1  # the head this read ends was too large
        else:
            # What follows the last head's end is the start of the next head.
            self.head_bytes = len(data) - last - 4
        if self.head_bytes > limit:
            self.transport.write(TOO_LARGE)
            self.transport.close()
            return
        super().data_received(data)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        self.running = cycle
        super()._start_asgi_task(cycle, app)

    def connection_lost(self, exc: Exception | None) -> None:
        cycles = [cycle for cycle, _ in self.pipeline]
        if self.running is not None:
            cycles.append(self.running)
        for cycle in cycles:
            if not cycle.response_complete:
                cycle.disconnected = True
            cycle.message_event.set()
        self.pipeline.clear()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        # uvicorn's: close an idle connection, or answer what was received and then close.
        super().shutdown()
        if not self.transport.is_closing():
            self.loop.call_later(self.bounds.shutdown_timeout, self.transport.abort)
