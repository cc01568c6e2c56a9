"""Computed work against the real service (``sudokupool serve``): renders and print sheets run in the work
pool, whose bounds hold whatever clients ask, while lookups, scrapes and syncs go on."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from sudokupool.api.computed import BUSY, TOO_LONG
from tests.factories import write_export
from tests.helpers import free_port, wait_until
from tests.servers import Server, in_one_window, run_server

pytestmark = pytest.mark.slow

MiB = 1 << 20


def metrics(port: int, prefixes: tuple[str, ...] = ("sudokupool_work", "sudokupool_image")) -> dict[str, float]:
    """The samples of a scrape whose names start with one of ``prefixes`` (the work's and the images' by default),
    by name and labels (``name{kind=png,outcome=done}``)."""
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30)
    assert response.status_code == 200
    text = response.text
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith(prefixes):
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                out[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return out


def jobs(samples: dict[str, float], outcome: str) -> float:
    return sum(
        v for k, v in samples.items() if k.startswith("sudokupool_work_jobs_total{") and f"outcome={outcome}" in k
    )


def resident(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def work_processes(server: Server) -> list[int]:
    """The work processes under the server (its worker's children running ``sudokupool.work.child``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"sudokupool.work.child" in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if _descends(pid, server.process.pid)]


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
        except OSError:
            return False
        if pid == ancestor:
            return True
    return False


def some_id(server: Server) -> str:
    code: str = httpx.get(f"{server.url}/api/v1/puzzles/random", timeout=10).json()["canonical_id"]
    return code


@pytest.fixture
def exports(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    directory = tmp_path / "exports"
    directory.mkdir()
    write_export(directory / "pool-20260101T000000Z.ndjson", records[:20])
    return directory


def serve(tmp_path: Path, exports: Path, **env: str) -> tuple[Any, int]:
    port = free_port()
    settings = {"SUDOKUPOOL_EXPORTS": str(exports), "SUDOKUPOOL_METRICS_PORT": str(port), **env}
    return run_server(settings, tmp_path / "server.log"), port


def test_a_sweep_of_every_size_and_format_keeps_the_worker_and_the_pool_under_their_ceilings(
    tmp_path: Path, exports: Path
) -> None:
    context, port = serve(tmp_path, exports, SUDOKUPOOL_WORK_PROCESS_BYTES=str(96 * MiB))
    with context as server:
        code = some_id(server)
        worker = server.process.pid
        start = resident(worker)
        peak = start
        statuses: dict[int, int] = {}
        sizes = [(size, fmt) for size in range(100, 2001, 50) for fmt in ("png", "webp")]
        lock = threading.Lock()

        def sweep(share: list[tuple[int, str]]) -> None:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                for size, fmt in share:
                    params = {"size": size, "format": fmt, "variant": "solution"}
                    status = client.get(f"/api/v1/puzzles/{code}/image", params=params).status_code
                    with lock:
                        statuses[status] = statuses.get(status, 0) + 1

        threads = [threading.Thread(target=sweep, args=(sizes[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            peak = max(peak, resident(worker))
            time.sleep(0.05)
        assert statuses == {200: len(sizes)}
        samples = metrics(port)
        assert jobs(samples, "done") == len(sizes)
        # The worker holds the rendered bytes its cache keeps, and nothing of the renders.
        cached = samples["sudokupool_image_cache_bytes"]
        assert resident(worker) - start <= cached + 20 * MiB
        assert peak <= 150 * MiB
        # Each work process keeps at most its ceiling after a job (a larger one is replaced).
        assert samples["sudokupool_work_resident_bytes"] <= 96 * MiB
        assert all(resident(pid) <= 96 * MiB for pid in work_processes(server))


def abandon_renders(server: Server, port: int, code: str, sizes: range) -> dict[str, float]:
    """Ask for ``code``'s WebP image at each of ``sizes``, each on a connection of its own, and hang up on them all
    at once; return the metrics once each of those jobs was rendered or dropped."""
    host, _, port_text = server.url.removeprefix("http://").partition(":")
    sockets = []
    for size in sizes:
        sock = socket.create_connection((host, int(port_text)))
        path = f"/api/v1/puzzles/{code}/image?size={size}&format=webp"
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        sockets.append(sock)
    for sock in sockets:
        sock.close()

    def settled() -> bool:
        samples = metrics(port)
        return jobs(samples, "done") + jobs(samples, "dropped") == len(sizes)

    wait_until(settled, "every abandoned request rendered or dropped", seconds=60, log=server.output)
    return metrics(port)


def test_requests_abandoned_while_they_wait_are_never_rendered(tmp_path: Path, exports: Path) -> None:
    context, port = serve(tmp_path, exports, SUDOKUPOOL_WORK_QUEUE="100")
    with context as server:
        samples = abandon_renders(server, port, some_id(server), range(1901, 1931))
        # At most the job a free process took at once (and one more, had it ended before the others left).
        assert jobs(samples, "done") <= 2
        assert jobs(samples, "dropped") >= 28
        assert httpx.get(f"{server.url}/api/v1/health", timeout=10).status_code == 200


def garbage_collected(port: int) -> float:
    """Objects the worker's cyclic garbage collector has freed since it started, over its generations."""
    return sum(metrics(port, ("python_gc_objects_collected_total",)).values())


def test_abandoned_renders_and_closed_connections_leave_nothing_for_the_garbage_collector(
    tmp_path: Path, exports: Path
) -> None:
    # What reference counting cannot free waits for the cyclic collector, whose passes hold up the serving loop
    # for as long as they take: under a flood of abandoned renders they took milliseconds, every second.
    context, port = serve(tmp_path, exports, SUDOKUPOOL_WORK_QUEUE="100")
    with context as server:
        code = some_id(server)
        host, _, port_text = server.url.removeprefix("http://").partition(":")

        def closed_lookups(count: int) -> None:
            for _ in range(count):
                with socket.create_connection((host, int(port_text)), timeout=30) as sock:
                    request = f"GET /api/v1/puzzles/{code} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                    sock.sendall(request.encode())
                    assert sock.recv(12) == b"HTTP/1.1 200"
                    while sock.recv(65536):
                        pass

        closed_lookups(20)
        before = garbage_collected(port)
        assert jobs(abandon_renders(server, port, code, range(1901, 1941)), "dropped") >= 30
        with httpx.Client(base_url=server.url, timeout=60, headers={"Connection": "close"}) as client:
            for size in range(300, 310):
                assert client.get(f"/api/v1/puzzles/{code}/image?size={size}").status_code == 200
        closed_lookups(300)
        collected = garbage_collected(port) - before
        assert collected < 100, f"the collector freed {collected:.0f} objects the requests left in cycles"


def test_past_the_queue_bound_an_image_is_a_503_with_retry_after(tmp_path: Path, exports: Path) -> None:
    context, port = serve(tmp_path, exports, SUDOKUPOOL_WORK_QUEUE="1")
    with context as server:
        code = some_id(server)
        answers: list[httpx.Response] = []
        lock = threading.Lock()

        def fetch(size: int) -> None:
            response = httpx.get(f"{server.url}/api/v1/puzzles/{code}/image?size={size}&format=webp", timeout=60)
            with lock:
                answers.append(response)

        threads = [threading.Thread(target=fetch, args=(size,)) for size in range(1980, 1992)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        busy = [r for r in answers if r.status_code == 503]
        assert {r.status_code for r in answers} == {200, 503}
        for response in busy:
            assert 1 <= int(response.headers["retry-after"]) <= 60
            assert response.headers["content-type"] == "application/json"
            assert response.json() == {"error": BUSY}
        assert jobs(metrics(port), "rejected") == len(busy)
        assert httpx.get(f"{server.url}/api/v1/puzzles/{code}/image?size=1980&format=webp").status_code == 200


class Flood(threading.Thread):
    def __init__(self, url: str, code: str, sizes: range) -> None:
        super().__init__(daemon=True)
        self.url, self.code, self.sizes = url, code, sizes
        self.stop = threading.Event()
        self.statuses: dict[int, int] = {}

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            for size in self.sizes:
                for fmt in ("png", "webp"):
                    if self.stop.is_set():
                        return
                    status = client.get(f"/api/v1/puzzles/{self.code}/image?size={size}&format={fmt}").status_code
                    self.statuses[status] = self.statuses.get(status, 0) + 1


@contextmanager
def flooding(url: str, code: str) -> Iterator[list[Flood]]:
    """Eight clients asking one after another for distinct large images, until the block ends."""
    flood = [Flood(url, code, range(1000 + i, 2001, 8)) for i in range(8)]
    for thread in flood:
        thread.start()
    try:
        yield flood
    finally:
        for thread in flood:
            thread.stop.set()
        for thread in flood:
            thread.join()


def test_a_scrape_and_a_sync_complete_during_a_render_flood(
    tmp_path: Path, exports: Path, records: list[dict[str, Any]]
) -> None:
    context, port = serve(tmp_path, exports, SUDOKUPOOL_SYNC_INTERVAL="1")
    with context as server, flooding(server.url, some_id(server)) as flood:
        wait_until(lambda: metrics(port)["sudokupool_work_queue_depth"] > 0, "a queue of renders", seconds=30)
        assert metrics(port)["sudokupool_image_renders_total"] > 0  # a scrape, answered while renders wait
        newer = "pool-20260102T000000Z.ndjson"
        write_export(tmp_path / newer, records[:30])  # the flooded puzzle stays
        shutil.move(tmp_path / newer, exports / newer)

        def swapped() -> bool:
            key: str = httpx.get(f"{server.url}/api/v1/health", timeout=30).json()["export"]["key"]
            return key.endswith(newer)

        wait_until(swapped, "the newer export served", seconds=30, log=server.output)
        assert httpx.get(f"{server.url}/api/v1/stats", timeout=30).json()["total"] == 30
        assert metrics(port)["sudokupool_work_queue_depth"] > 0, "the flood was over before the checks"
    for thread in flood:
        assert set(thread.statuses) <= {200, 503}
        assert thread.statuses.get(200, 0) > 0


def test_costs_appear_in_the_rate_limit_headers(tmp_path: Path, exports: Path) -> None:
    def attempt() -> list[tuple[int, int]]:
        context, _ = serve(tmp_path, exports, SUDOKUPOOL_COST_RENDER="7", SUDOKUPOOL_COST_PRINT="11")
        with context as server, httpx.Client(base_url=server.url, timeout=30) as client:
            code = some_id(server)  # on /api/v1: not counted
            seen = []
            for path in (
                f"/api/v2/puzzles/{code}",
                f"/api/v2/puzzles/{code}/image?size=333",
                f"/api/v2/puzzles/{code}/image?size=333",
                "/print?count=2",
                f"/api/v2/puzzles/{code}/image?size=334&format=svg",
            ):
                response = client.get(path)
                seen.append((response.status_code, int(response.headers["x-ratelimit-remaining"])))
            # 60 - 1 - 7 - 1 - 11 - 7 = 33 left: four more renders do not fit; the fifth is refused before it is drawn.
            for size in range(335, 340):
                response = client.get(f"/api/v2/puzzles/{code}/image?size={size}")
                seen.append((response.status_code, int(response.headers["x-ratelimit-remaining"])))
            return seen

    seen = in_one_window(attempt)
    renders = [(200, 26), (200, 19), (200, 12), (200, 5), (429, 0)]
    assert seen == [(200, 59), (200, 52), (200, 51), (200, 40), (200, 33), *renders]


def test_a_render_past_its_budget_is_a_503_and_the_service_keeps_answering(tmp_path: Path, exports: Path) -> None:
    context, port = serve(tmp_path, exports, SUDOKUPOOL_WORK_BUDGET_SECONDS="0.001")
    with context as server:
        code = some_id(server)
        for _ in range(2):
            response = httpx.get(f"{server.url}/api/v2/puzzles/{code}/image?size=2000&format=webp", timeout=30)
            assert response.status_code == 503
            assert 1 <= int(response.headers["retry-after"]) <= 60
            assert response.json() == {"error": TOO_LONG}
        assert httpx.get(f"{server.url}/api/v2/puzzles/{code}", timeout=30).status_code == 200
        samples = metrics(port)
        assert jobs(samples, "over_budget") == 2
        # Each stopped job's process was killed; the next job started another.
        assert samples["sudokupool_work_processes_started_total"] == 2
        wait_until(lambda: not work_processes(server), "the stopped work processes gone", log=server.output)
