"""The HTTP server: how ``sudokupool serve`` (and so the Procfile, which runs it) starts uvicorn or granian.

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
:class:`BoundedHttpToolsProtocol`; granian has flags for all but the ``Server`` header, and limits of its
own on a head's size, lines and target (docs/security.md, "Connections"). The access log is
the app's own (:class:`sudokupool.logs.AccessLog`), the same on both servers.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from functools import cache
from types import FrameType
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.supervisors.multiprocess import Process as WorkerHandle

from sudokupool import supervision
from sudokupool.config import Settings, listen_port, parse_value, parse_workers
from sudokupool.keys import Keyring
from sudokupool.logs import granian_log_config, json_line, log_config
from sudokupool.metrics.workers import cleanup, prepare

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
    raw = environ.get("WEB_CONCURRENCY")
    workers: int = parse_value("WEB_CONCURRENCY", raw, parse_workers) if raw else 1
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
    # One heap in each worker from its start (sudokupool.heap.one_heap): a worker's own call comes too late when
    # a thread of the server's has allocated before the app is built (uvicorn's health-check thread does).
    os.environ.setdefault(ARENA_MAX, "1")
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
                from uvicorn.supervisors import multiprocess

                setattr(multiprocess, "Process", QuickHealthcheck)  # noqa: B010 - the workers' handles, see there
                with _stop_signals_end_the_run():
                    uvicorn.run(**uvicorn_options(launch))
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
HEAD_END = b"\r\n\r\n"
#: Requests read and waiting behind the one being answered, per connection; past them the connection is
#: not read (its bytes wait in the kernel's buffers) until an answer is done.
QUEUED_REQUESTS = 8
#: Bytes of answers a connection may have waiting in the transport before its requests stop being
#: answered (uvicorn's flow control waits) and it stops being read.
WRITE_BUFFER_BYTES = 65536


class BoundedFlowControl(FlowControl):
    """uvicorn's flow control, except that reading resumes only when the protocol may read
    (:meth:`BoundedHttpToolsProtocol.may_read`; uvicorn resumes it after every answer and whenever the
    app asks for the request body, whatever is queued), and that the protocol hears of each pause and
    resume: a connection that is not read is not timed."""

    def __init__(self, transport: asyncio.Transport, protocol: BoundedHttpToolsProtocol) -> None:
        super().__init__(transport)
        self.protocol = protocol

    def pause_reading(self) -> None:
        if not self.read_paused:
            super().pause_reading()
            self.protocol.reading_paused()

    def resume_reading(self) -> None:
        if self.read_paused and self.protocol.may_read():
            super().resume_reading()
            self.protocol.reading_resumed()


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the service's bounds (see the module docstring).

    - Head size: the bytes since the end of the last head (``CRLF CRLF``) are counted across reads; past
      the limit the client gets 431 and the connection is closed. A request body counts too (the API
      takes none); within one read (at most 256 KiB), heads after the first are checked only when the
      read ends inside one.
    - Head time: a request head must end ``first_request_timeout`` seconds after its first byte is read
      (timed like the size: from the first byte read after a head's end, a body included), on every
      request of a connection, else the connection is closed once the requests before it are answered.
      A partial head does not stop the idle timers either: a new connection has ``first_request_timeout``
      to send a whole head, and one kept alive uvicorn's keep-alive timeout after an answer. While the
      connection is not read (below) nothing is timed: it waits on its client. Found from the reads
      rather than the parser's callbacks: overriding two of them cost 0.55 µs a request.
    - Pipelining: at most :data:`QUEUED_REQUESTS` requests wait behind the one being answered; the rest
      of a read that holds more (up to one read, 256,000 bytes with uvloop) is held unparsed, and the
      connection is not read until they are answered. Answers the client does not read fill the
      transport's buffer up to :data:`WRITE_BUFFER_BYTES`; then answering waits (uvicorn's flow control)
      and the connection is not read either. A client that sends and never reads holds that much.
    - A client that hangs up while pipelined requests are queued: every queued and running request is
      marked disconnected, so nothing writes to the closed transport (uvicorn logs that as an ERROR
      with a traceback).
    - Shutdown: as uvicorn's, the requests received are answered, the last with ``connection: close``;
      a connection still busy at the shutdown timeout (a client that does not read) is aborted.

    It overrides uvicorn internals (``data_received``, parser callbacks, ``flow``, the keep-alive timer):
    pyproject.toml pins uvicorn to the versions it was tested with.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds = bounds()
        self.head_bytes = 0
        self.running: RequestResponseCycle | None = None
        # Bounds the head being read (``head_bytes`` above 0: bytes read since the last head's end).
        self.head_timer: asyncio.TimerHandle | None = None
        # A read that held more requests than may queue, and where its unparsed rest starts (kept whole:
        # copying the rest at each resume would copy a read of small requests once per request).
        self.backlog = b""
        self.backlog_at = 0
        self.resume_scheduled = False
        # No more requests are read: the connection closes once those received are answered.
        self.finishing = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = BoundedFlowControl(transport, self)
        transport.set_write_buffer_limits(high=WRITE_BUFFER_BYTES)
        # The keep-alive timer's slot: a whole head cancels it (as it does keep-alive's), a byte does not.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.bounds.first_request_timeout, self.timeout_keep_alive_handler
        )

    def may_read(self) -> bool:
        """Whether the connection may be read: nothing held unparsed, room in the queue, and the client
        taking its answers (the transport's buffer below its high-water mark)."""
        return (
            not self.backlog
            and not self.finishing
            and len(self.pipeline) < QUEUED_REQUESTS
            and not self.flow.write_paused
        )

    def data_received(self, data: bytes) -> None:
        # Two searches of the read, no parser callbacks: this runs for every request.
        limit = self.bounds.max_header_bytes
        last = data.rfind(HEAD_END)
        first = last
        if last < 0:
            self.head_bytes += len(data)
        else:
            first = data.find(HEAD_END)
            if self.head_bytes + first > limit:
                self.head_bytes = limit + 1  # the head this read ends was too large
            else:
                # What follows the last head's end is the start of the next head.
                self.head_bytes = len(data) - last - 4
        if self.head_bytes > limit:
            self.transport.write(TOO_LARGE)
            self.transport.close()
            return
        if self.finishing:
            return
        if last >= 0:
            # A head ended: the wait for a request is over (uvicorn ends it at any byte, so a partial head
            # held a connection forever), and so is that head's timer.
            self._unset_keepalive_if_required()
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None
        if self.backlog:
            # Read while requests were held back (reading is paused then): keep the order.
            self.backlog = self.backlog[self.backlog_at :] + data
            self.backlog_at = 0
            self.flow.pause_reading()
            return
        if first == last and len(self.pipeline) < QUEUED_REQUESTS:
            # At most one head ends in this read: one request at most joins the queue.
            self.parse(data)
        else:
            self.feed(data)
        if self.head_bytes and self.head_timer is None:
            self.time_head()

    def parse(self, data: bytes | memoryview) -> bool:
        """uvicorn's ``data_received`` without its cancelling the keep-alive timer at any byte (a head's end
        does, in :meth:`data_received`); False when the connection is done with (refused, upgraded)."""
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return False
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return False
        return True

    def feed(self, data: bytes, start: int = 0) -> None:
        """Parse ``data`` from ``start`` a head at a time while requests may queue; hold the rest and stop
        reading."""
        view = memoryview(data)
        size = len(data)
        while start < size:
            if len(self.pipeline) >= QUEUED_REQUESTS or self.flow.write_paused:
                self.backlog, self.backlog_at = data, start
                self.flow.pause_reading()
                return
            end = data.find(HEAD_END, start)
            stop = size if end < 0 else end + 4
            if not self.parse(view[start:stop]) or self.transport.is_closing():
                return
            start = stop

    def time_head(self) -> None:
        """Bound the head being read (when the connection is read and open)."""
        if not self.flow.read_paused and self.parser is not None and not self.transport.is_closing():
            self.head_timer = self.loop.call_later(self.bounds.first_request_timeout, self.head_timeout)

    def head_timeout(self) -> None:
        """A head was not whole in time: close, once the requests before it are answered."""
        self.head_timer = None
        if self.transport.is_closing():
            return
        self.finish()
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()

    def finish(self) -> None:
        """Read no more requests; the last one received closes the connection once answered."""
        self.finishing = True
        self.backlog, self.backlog_at = b"", 0
        self.flow.pause_reading()
        if self.cycle is not None:
            self.cycle.keep_alive = False

    def reading_paused(self) -> None:
        # The client waits on its answers, or is not taking them: neither the idle nor the head timer runs.
        self._unset_keepalive_if_required()
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def reading_resumed(self) -> None:
        # Keep-alive is armed by uvicorn's on_response_complete (after it resumes reading) or by resume().
        if self.head_bytes and self.head_timer is None:
            self.time_head()

    def schedule_resume(self) -> None:
        if not self.resume_scheduled and (self.backlog or self.flow.read_paused):
            self.resume_scheduled = True
            self.loop.call_soon(self.resume)

    def resume(self) -> None:
        """Parse what was held back, then read again, as far as the bounds allow (scheduled: never from
        inside the parser's callbacks or an answer's ``send``)."""
        self.resume_scheduled = False
        if self.parser is None or self.transport.is_closing() or self.finishing:
            return
        if self.backlog and len(self.pipeline) < QUEUED_REQUESTS and not self.flow.write_paused:
            data, start = self.backlog, self.backlog_at
            self.backlog, self.backlog_at = b"", 0
            self.feed(data, start)
            if self.head_bytes and self.head_timer is None:
                self.time_head()
        self.flow.resume_reading()
        idle = self.cycle is None or self.cycle.response_complete
        if idle and not self.flow.read_paused and self.timeout_keep_alive_task is None:
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.flow.read_paused and not self.transport.is_closing():
            # Requests are held back (here or in the kernel's buffer): not idle; they are read next.
            self._unset_keepalive_if_required()
            self.schedule_resume()

    def resume_writing(self) -> None:
        super().resume_writing()
        self.schedule_resume()

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        self.running = cycle
        super()._start_asgi_task(cycle, app)

    def connection_lost(self, exc: Exception | None) -> None:
        self.backlog, self.backlog_at = b"", 0
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None
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
            self.finish()
            self.loop.call_later(self.bounds.shutdown_timeout, self.transport.abort)


class QuickHealthcheck(WorkerHandle):
    """uvicorn's handle of one worker (several workers), whose health check gives up as soon as the worker has
    exited. uvicorn's waits for its whole timeout (5 s) on a worker that exits while a check is waiting, as one
    whose start failed does: the launcher then reported a failed start ~5 s after both workers had died
    (granian: at once)."""

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
