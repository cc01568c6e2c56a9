"""The launcher: how ``sudokupool serve`` (and so the Procfile, which runs it) starts uvicorn or granian.

:class:`Launch` is everything the server is started with, read from the settings and the platform's
``PORT`` and ``WEB_CONCURRENCY``. :func:`uvicorn_options` and :func:`granian_argv` turn it into each
server's configuration with the same bounds:

- a request head (request line and headers) over ``SUDOKUPOOL_MAX_HEADER_BYTES`` is answered 431;
- a request head must be whole ``SUDOKUPOOL_FIRST_REQUEST_TIMEOUT`` seconds after the connection opened
  (a connection that sends nothing, or one byte, is closed then), and on a kept-alive connection within
  the keep-alive timeout of the last answer; any head within that time of its first byte;
- a client that sends and never reads holds a bounded amount of memory (uvicorn: :data:`QUEUED_REQUESTS`,
  :data:`WRITE_BUFFER_BYTES`; granian bounds it itself);
- a shutdown (SIGTERM) lets requests in flight finish and takes at most ``SUDOKUPOOL_SHUTDOWN_TIMEOUT``
  seconds; connections still busy then are closed;
- the server never rewrites the client address from forwarded headers (:mod:`sudokupool.api.clientip` does)
  and, on uvicorn, sends no ``Server`` header.

On uvicorn the bounds and the quiet handling of clients that hang up live in
:class:`~sudokupool.serving.protocol.BoundedHttpToolsProtocol`; granian has flags for all but the ``Server``
header, and limits of its own on a head's size, lines and target (docs/security.md, "Connections"). The access
log is the app's own (:class:`sudokupool.logs.AccessLog`), the same on both servers.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pickle
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

from uvicorn import Server as UvicornServer
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Process as WorkerHandle

from sudokupool.config import Settings, listen_port, web_concurrency
from sudokupool.logs import granian_log_config, json_line, log_config
from sudokupool.metrics.workers import cleanup, prepare
from sudokupool.ratelimit.keys import Keyring
from sudokupool.serving import draining, supervision
from sudokupool.serving.protocol import BoundedHttpToolsProtocol

APP = "sudokupool.app:create_app"
#: glibc's setting of the most heaps a process makes, read when a process starts.
ARENA_MAX = "MALLOC_ARENA_MAX"
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
    workers = web_concurrency(environ)
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


def checked_settings(environ: Mapping[str, str]) -> Settings:
    """The settings ``serve`` starts with, checked as it checks them before any server starts: every
    ``SUDOKUPOOL_*`` value, the API key entries (and their file), ``PORT`` and ``WEB_CONCURRENCY``. A bad one
    raises :class:`~sudokupool.config.SettingsError`, which the CLI reports as one line (exit status 2).
    ``sudokupool settings`` checks through here too, so it accepts exactly what ``serve`` accepts."""
    settings = Settings.from_environ(environ)
    # The app factory checks the key entries again, but a server may run it in a worker process whose
    # exit it reports in its own words.
    Keyring.from_settings(settings)
    launch(settings, environ)
    return settings


def uvicorn_options(launch: Launch) -> dict[str, Any]:
    """Keyword arguments of ``uvicorn.Config`` (and ``uvicorn.run``) for ``launch``."""
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
    A start that fails ends with one line, the reason, and :data:`~sudokupool.serving.supervision.STARTUP_FAILED`;
    workers die with the launcher (see :mod:`sudokupool.serving.supervision`).
    """
    problem = server_problem(launch) or port_problem(launch)
    if problem is not None:
        print(f"sudokupool: {problem}", file=sys.stderr)
        return 2
    os.environ["SUDOKUPOOL_HOST"] = launch.host
    # One heap in each worker from its start (sudokupool.serving.heap.one_heap): a worker's own call comes too late when
    # a thread of the server's has allocated before the app is built (uvicorn's health-check thread does).
    os.environ.setdefault(ARENA_MAX, "1")
    # granian's workers get SIGKILL when the launcher dies (see sudokupool.serving.supervision), uvicorn's SIGTERM.
    death_signal = signal.SIGKILL if launch.server == "granian" else signal.SIGTERM
    supervised = supervision.Supervisor(os.environ, death_signal=death_signal)
    made = None
    status: int | str | None = 0
    try:
        if launch.metrics_port is not None:
            made = prepare(os.environ, launch.workers)
        try:
            if launch.server == "granian":
                _run_granian(launch)
            else:
                with _stop_signals_end_the_run():
                    _run_uvicorn(launch)
        except SystemExit as exc:
            status = exc.code
        except _Stopped:
            status = 0
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


class _Stopped(Exception):
    """SIGTERM or SIGINT reached the launcher outside the server's own handlers."""


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


@contextlib.contextmanager
def _stop_signals_end_the_run() -> Iterator[None]:
    """SIGTERM and SIGINT end ``uvicorn.run`` as an exception (:class:`_Stopped`) rather than end the process.

    A single uvicorn worker runs in the launcher, and after its graceful shutdown uvicorn raises the signal it
    handled again, under the handler it found: with the default one the launcher died by SIGTERM (status 143)
    before it could clean up, where docs/operations.md says 0 and several workers give 0. A signal before
    uvicorn's handlers are in place ends the run the same way."""
    stops = (signal.SIGTERM, signal.SIGINT)
    previous = {sig: signal.signal(sig, _stopped) for sig in stops}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_uvicorn(launch: Launch) -> None:
    """``uvicorn.run`` with the servers and supervisor of :mod:`sudokupool.serving.draining`, which stop without
    dropping a connection, and :class:`Worker` handles."""
    import uvicorn
    from uvicorn.supervisors import multiprocess

    config = uvicorn.Config(**uvicorn_options(launch))
    if config.workers > 1:
        setattr(multiprocess, "Process", Worker)  # noqa: B010 - the supervisor makes its workers' handles so
        listener = config.bind_socket()
        try:
            draining.Supervisor(config, sockets=[listener]).run()
        finally:
            listener.close()
        return
    server = draining.Server(config=config)
    server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)


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


def server_problem(launch: Launch) -> str | None:
    """Why the server ``SUDOKUPOOL_SERVER`` names cannot run here (one line), or None: granian is an extra."""
    if launch.server == "granian" and importlib.util.find_spec("granian") is None:
        return "SUDOKUPOOL_SERVER=granian, but granian is not installed: pip install 'sudokupool[granian]'"
    return None


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


class Worker(WorkerHandle):
    """uvicorn's handle of one worker (several workers), which runs :class:`sudokupool.serving.draining.Server`,
    and whose health check gives up as soon as the worker has exited. uvicorn's waits for its whole timeout (5 s)
    on a worker that exits while a check is waiting, as one whose start failed does: the launcher then reported a
    failed start ~5 s after both workers had died (granian: at once)."""

    @property
    def server(self) -> UvicornServer:
        if self._server is None:
            self._server = draining.Server(config=self.config)
        return self._server

    def _healthcheck(self, timeout: float) -> bool | None:
        try:
            self.parent_conn.send(b"ping")
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                if self.parent_conn.poll(min(left, 0.1)):
                    started: bool = self.parent_conn.recv()
                    return started
                if not self.process.is_alive():
                    return None
            return None
        except (OSError, EOFError, pickle.UnpicklingError):
            return None
