"""The metrics port answers a scrape without waiting for the loop's default executor, whose threads the loader's
file work (and its file locks) may hold, and lets the loop serve between the metric families it writes."""

from __future__ import annotations

import asyncio
import gzip
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from sudokupool.metrics.endpoint import SLICE_SECONDS, MetricsServer
from tests.helpers import free_port

pytestmark = pytest.mark.anyio

BODY = b"# TYPE figures gauge\nfigures 1.0\n"


class Figures:
    """What the metrics port asks of its exporter: a flush, then the body (``multiprocess_dir``: several workers'
    files to merge). Records the thread each body was written in."""

    def __init__(self, multiprocess_dir: str | None) -> None:
        self.multiprocess_dir = multiprocess_dir
        self.threads: list[str] = []

    def flush(self) -> None:
        pass

    def exposition(self, accept: str = "") -> tuple[bytes, str]:
        parts, content_type = self.exposition_parts(accept)
        return b"".join(parts), content_type

    def exposition_parts(self, accept: str = "") -> tuple[Iterator[bytes], str]:
        self.threads.append(threading.current_thread().name)
        return iter((BODY,)), "text/plain; version=0.0.4; charset=utf-8"


async def scrape(port: int, fields: bytes = b"") -> bytes:
    # A numeric address: opening the connection asks no thread to resolve a name.
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: metrics\r\n" + fields + b"\r\n")
    answer = await reader.read()
    writer.close()
    return answer


@pytest.mark.parametrize("directory", [None, "several-workers"], ids=["one worker", "several workers"])
async def test_a_scrape_is_answered_while_every_thread_of_the_default_executor_is_taken(directory: str | None) -> None:
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(2, "default"))
    release = threading.Event()
    held = [loop.run_in_executor(None, release.wait) for _ in range(2)]
    figures = Figures(directory)
    server = MetricsServer(figures, "127.0.0.1", free_port())  # type: ignore[arg-type]
    await server.start()
    try:
        answer = await asyncio.wait_for(scrape(server.port), 30)
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        assert answer.endswith(b"\r\n\r\n" + BODY)
        assert not any(future.done() for future in held), "the default executor was free after all"
        assert len(figures.threads) == 1
        assert not figures.threads[0].startswith("default")
    finally:
        release.set()
        await asyncio.gather(*held)
        await server.stop()


class SlowFamilies(Figures):
    """Figures whose body comes in families that each take twice the metrics port's slice to write; notes the
    turns ``ticks`` counted when each family began."""

    FAMILIES = 6

    def __init__(self, ticks: list[int]) -> None:
        super().__init__(None)
        self.ticks = ticks
        self.seen: list[int] = []

    def exposition_parts(self, accept: str = "") -> tuple[Iterator[bytes], str]:
        def parts() -> Iterator[bytes]:
            for n in range(self.FAMILIES):
                self.seen.append(self.ticks[0])
                until = time.perf_counter() + 2 * SLICE_SECONDS
                while time.perf_counter() < until:
                    pass
                yield f"figure_{n} {n}\n".encode()

        return parts(), "text/plain; version=0.0.4; charset=utf-8"


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
async def test_a_scrape_lets_the_loop_serve_between_its_metric_families(compress: bool) -> None:
    ticks = [0]

    async def other_work() -> None:
        while True:
            await asyncio.sleep(0)
            ticks[0] += 1

    figures = SlowFamilies(ticks)
    server = MetricsServer(figures, "127.0.0.1", free_port())  # type: ignore[arg-type]
    await server.start()
    other = asyncio.create_task(other_work())
    try:
        answer = await asyncio.wait_for(scrape(server.port, b"Accept-Encoding: gzip\r\n" if compress else b""), 30)
    finally:
        other.cancel()
        await server.stop()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert (b"\r\ncontent-encoding: gzip" in head) is compress
    assert (gzip.decompress(body) if compress else body) == b"".join(
        f"figure_{n} {n}\n".encode() for n in range(SlowFamilies.FAMILIES)
    )
    # The loop's other work ran between every two families, not only before and after the scrape.
    assert len(figures.seen) == SlowFamilies.FAMILIES
    assert all(later > earlier for earlier, later in zip(figures.seen, figures.seen[1:], strict=False))
