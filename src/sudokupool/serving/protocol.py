"""uvicorn's httptools protocol with the service's bounds on a connection (the launcher's module docstring lists
them, :mod:`sudokupool.serving.launcher`): a request head's size and time, the requests a pipelining client may
queue, the answers it may leave unread, a shutdown within its timeout; and an answer's head sent with its body."""

from __future__ import annotations

import asyncio
import os
import weakref
from dataclasses import dataclass
from functools import cache
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from sudokupool.config import Settings


@dataclass(frozen=True)
class ConnectionBounds:
    """The bounds every connection of this process gets (``SUDOKUPOOL_MAX_HEADER_BYTES``,
    ``SUDOKUPOOL_FIRST_REQUEST_TIMEOUT``, ``SUDOKUPOOL_SHUTDOWN_TIMEOUT``)."""

    max_header_bytes: int
    first_request_timeout: float
    shutdown_timeout: float


@cache
def bounds() -> ConnectionBounds:
    """This process's bounds, from the environment (a worker process reads what its parent was started with)."""
    settings = Settings.from_environ(os.environ)
    return ConnectionBounds(settings.max_header_bytes, settings.first_request_timeout, settings.shutdown_timeout)


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
#: On a shutdown, how long a connection between requests may still send one more (answered with
#: ``connection: close``) before it is closed: a client's next request is often on its way, or already in the
#: kernel's buffer, and closing then would lose it (:mod:`sudokupool.serving.draining`).
LAST_REQUEST_WAIT = 0.1
#: The same for a connection that has sent no request yet: its client connected to send one (on a loaded machine
#: the request can follow the connection by more than :data:`LAST_REQUEST_WAIT`).
FIRST_REQUEST_WAIT = 1.0


class HeadWithBody:
    """A request's view of its connection's transport, for uvicorn's cycle: the answer's head (the cycle's first
    write) is held until the body's first write, and both leave in one ``writev``, one packet for a small answer,
    where uvicorn sends the head on its own. A close sends what is held first. Not for a HEAD request: its answer
    has no body to wait for."""

    __slots__ = ("first", "held", "transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.held: bytes | None = None
        self.first = True

    def write(self, data: bytes) -> None:
        if self.first:
            self.first = False
            self.held = data
        elif self.held is not None:
            self.transport.writelines((self.held, data))
            self.held = None
        else:
            self.transport.write(data)

    def close(self) -> None:
        if self.held is not None:
            self.transport.write(self.held)
            self.held = None
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()


class BoundedFlowControl(FlowControl):
    """uvicorn's flow control, except that reading resumes only when the protocol may read
    (:meth:`BoundedHttpToolsProtocol.may_read`; uvicorn resumes it after every answer and whenever the
    app asks for the request body, whatever is queued), and that the protocol hears of each pause and
    resume: a connection that is not read is not timed. It holds the protocol weakly: the protocol holds it, and
    a reference cycle would keep both, with the transport and the last request, until a pass of the garbage
    collector, which holds up the event loop while it runs."""

    def __init__(self, transport: asyncio.Transport, protocol: BoundedHttpToolsProtocol) -> None:
        super().__init__(transport)
        self.protocol = weakref.ref(protocol)

    def pause_reading(self) -> None:
        if not self.read_paused:
            super().pause_reading()
            protocol = self.protocol()
            if protocol is not None:
                protocol.reading_paused()

    def resume_reading(self) -> None:
        if self.read_paused:
            protocol = self.protocol()
            if protocol is not None and protocol.may_read():
                super().resume_reading()
                protocol.reading_resumed()


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the service's bounds.

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
      rather than the parser's callbacks, whose overriding costs more a request (docs/benchmarks.md, "Figures
      the code's design rests on").
    - Pipelining: at most :data:`QUEUED_REQUESTS` requests wait behind the one being answered; the rest
      of a read that holds more (up to one read, 256,000 bytes with uvloop) is held unparsed, and the
      connection is not read until they are answered. Answers the client does not read fill the
      transport's buffer up to :data:`WRITE_BUFFER_BYTES`; then answering waits (uvicorn's flow control)
      and the connection is not read either. A client that sends and never reads holds that much.
    - A client that hangs up while pipelined requests are queued: every queued and running request is
      marked disconnected, so nothing writes to the closed transport (uvicorn logs that as an ERROR
      with a traceback).
    - Shutdown: as uvicorn's, the requests received are answered, the last with ``connection: close``; a
      connection between requests may send one more within :data:`LAST_REQUEST_WAIT` (one that has sent none yet:
      :data:`FIRST_REQUEST_WAIT`), answered the same way
      (uvicorn closes it at once, losing a request on its way); a connection still busy at the shutdown timeout
      (a client that does not read) is aborted.

    - Answers: a head leaves in one write with its body (:class:`HeadWithBody`), a system call and a packet less an
      answer.

    It overrides uvicorn internals (``data_received``, parser callbacks, ``flow``, the keep-alive timer, the cycle's
    transport):
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
        # Shutting down: the next request to start is the connection's last.
        self.last_request = False

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
        if cycle.scope["method"] != "HEAD":
            cycle.transport = HeadWithBody(cycle.transport)  # type: ignore[assignment]
        if self.last_request:
            self.finish()
            cycle.keep_alive = False
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
        if self.transport.is_closing():
            return
        self.loop.call_later(self.bounds.shutdown_timeout, self.transport.abort)
        if (self.cycle is None or self.cycle.response_complete) and not self.pipeline and not self.finishing:
            # Between requests: the next one may be on its way (or held, or in the kernel's buffer). It is read and
            # answered with connection: close; if none has begun within the wait, the connection closes.
            self.last_request = True
            self._unset_keepalive_if_required()
            wait = FIRST_REQUEST_WAIT if self.running is None else LAST_REQUEST_WAIT
            self.timeout_keep_alive_task = self.loop.call_later(wait, self.timeout_keep_alive_handler)
            self.schedule_resume()
            return
        # uvicorn's: answer what was received and then close.
        super().shutdown()
        if not self.transport.is_closing():
            self.finish()
