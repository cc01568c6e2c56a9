"""The metrics port: ``GET /metrics`` on ``SUDOKUPOOL_METRICS_PORT``, never on the API's port.

Each worker listens on it from its own event loop, started by the app's lifespan. With several workers
they all bind the one port with ``SO_REUSEPORT`` (the kernel hands each connection to one of them), and
any worker's answer merges every worker's figures (:mod:`sudokupool.metrics.exporter`). This works the
same under uvicorn and granian, whose workers are spawned by the server itself.

A few lines of HTTP/1.1 rather than a second web server: one path, read with a bounded head and a
timeout, answered, and the connection closed. prometheus-client's own ``start_http_server`` runs a
thread per worker and cannot share the port between workers.

A scrape waits for nothing else the worker does. One worker's figures are in its memory: the body is written
on the event loop itself (Python that in a thread would hold the GIL, and so the loop, as long), since a hop to
a thread and back costs two more turns of a busy loop and of busy cores, each a wait behind the requests in
flight. It is written a few lines at a time (:mod:`sudokupool.metrics.text`), and the requests waiting are
served whenever it has held the loop for :data:`SLICE_SECONDS`, so a scrape adds no long wait to any request; a
gzip answer is compressed part by part in the same slices.
Several workers' figures are merged from their files: that runs in the metrics server's own thread, never in the
loop's default executor, where the loader's file work (and its locks) may be waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import time
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from sudokupool.metrics.exporter import Exporter

logger = logging.getLogger("sudokupool")

#: The longest request head the port reads, and how long a client has to send it.
MAX_HEAD = 16 * 1024
HEAD_SECONDS = 10.0
#: The longest a scrape holds the event loop at a time (past it, at the end of a part of the text, requests waiting
#: are served before the scrape goes on): about what a lookup costs the loop, well under what it waits in a busy one.
SLICE_SECONDS = 0.0001
#: zlib's window bits for a gzip header and trailer.
GZIP_WBITS = 16 + zlib.MAX_WBITS


class MetricsServer:
    """Serves ``exporter``'s metrics on ``host:port``; ``shared``: with other workers (``SO_REUSEPORT``)."""

    def __init__(self, exporter: Exporter, host: str, port: int, *, shared: bool = False) -> None:
        self.exporter = exporter
        self.host = host
        self.port = port
        self.shared = shared
        self.server: asyncio.Server | None = None
        #: The thread that merges several workers' files (one worker's scrape needs none).
        self.thread: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        """Listen; raise OSError when the port cannot be bound."""
        self.server = await asyncio.start_server(
            self.handle, self.host, self.port, reuse_port=self.shared or None, limit=MAX_HEAD
        )

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None
        if self.thread is not None:
            self.thread.shutdown(wait=False)
            self.thread = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(HEAD_SECONDS):
                head = await reader.readuntil(b"\r\n\r\n")
            status, headers, body = await self.answer(head)
            if head.startswith(b"HEAD "):
                writer.write(response(status, headers, b"", length=len(body)))
            else:
                writer.write(response(status, headers, body))
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        except Exception:
            logger.exception("metrics: scrape failed")
            with contextlib.suppress(ConnectionError):
                writer.write(response(500, [], b"error\n"))
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def answer(self, head: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return 400, [], b"bad request\n"
        method, target, _ = parts
        if target.partition("?")[0] != "/metrics":
            return 404, [], b"not found: the metrics are at /metrics\n"
        if method not in ("GET", "HEAD"):
            return 405, [("allow", "GET, HEAD")], b"method not allowed\n"
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        self.exporter.flush()
        compress = "gzip" in fields.get("accept-encoding", "")
        body, content_type = await self.exposition(fields.get("accept", ""), compress=compress)
        headers = [("content-type", content_type)]
        if compress:
            headers.append(("content-encoding", "gzip"))
        return 200, headers, body

    async def exposition(self, accept: str, *, compress: bool = False) -> tuple[bytes, str]:
        """The exporter's body, gzipped if ``compress``: on the loop for one worker, in slices of at most about
        :data:`SLICE_SECONDS` with the loop's other work between them; merging several workers' files reads the
        disk, in this server's own thread (the loop keeps serving the API meanwhile)."""
        if not self.exporter.multiprocess_dir:
            parts, content_type = self.exporter.exposition_parts(accept)
            return await sliced(parts, compress), content_type
        if self.thread is None:
            self.thread = ThreadPoolExecutor(1, "sudokupool-metrics")
        return await asyncio.get_running_loop().run_in_executor(self.thread, merged, self.exporter, accept, compress)


async def sliced(parts: Iterable[bytes], compress: bool) -> bytes:
    """``parts`` joined (and gzipped, level 1, if ``compress``), letting the loop's other work run whenever this has
    held it for :data:`SLICE_SECONDS`."""
    deflate = zlib.compressobj(1, zlib.DEFLATED, GZIP_WBITS) if compress else None
    body = []
    began = time.perf_counter()
    for part in parts:
        body.append(deflate.compress(part) if deflate is not None else part)
        if time.perf_counter() - began > SLICE_SECONDS:
            await asyncio.sleep(0)
            began = time.perf_counter()
    if deflate is not None:
        body.append(deflate.flush())
    return b"".join(body)


def merged(exporter: Exporter, accept: str, compress: bool) -> tuple[bytes, str]:
    """Several workers' body (gzipped, level 1, if ``compress``): for the metrics server's thread."""
    body, content_type = exporter.exposition(accept)
    return (gzip.compress(body, 1) if compress else body), content_type


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}


def response(status: int, headers: list[tuple[str, str]], body: bytes, *, length: int | None = None) -> bytes:
    """A complete response; ``length``: the Content-Length of a HEAD answer (whose body is not sent)."""
    lines = [f"HTTP/1.1 {status} {REASONS[status]}"]
    if status != 200:
        headers = [("content-type", "text/plain; charset=utf-8"), *headers]
    lines += [f"{name}: {value}" for name, value in headers]
    lines += [f"content-length: {len(body) if length is None else length}", "connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body
