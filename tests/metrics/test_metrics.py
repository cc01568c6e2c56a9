"""The metrics port: exact counts after a known sequence, no ids in labels, off by default, and one scrape
summing every worker of a server started as the Procfile starts it."""

from __future__ import annotations

import asyncio
import glob
import os
import platform
import subprocess
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from sudokupool import __version__
from sudokupool.api.tally import BUCKETS, RequestTally, code_label
from sudokupool.app import SudokuPool, create_app
from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from sudokupool.ratelimit.keys import digest
from tests.factories import write_export
from tests.helpers import free_port, running
from tests.seaweed import SeaweedS3
from tests.servers import ROOT, command, run_server
from tests.valkey import ValkeyServer

pytestmark = pytest.mark.anyio

KEY = "metrics-test-key"
SYNC = ("attempts", "successes", "failures", "refusals")
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def select(samples: Samples, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(labels)): value for (found, labels), value in samples.items() if found == name}


def request_labels(surface: str, route: str, method: str, code: int) -> tuple[tuple[str, str], ...]:
    labels = {"surface": surface, "route": route, "method": method, "status": f"{code // 100}xx", "code": str(code)}
    return tuple(sorted(labels.items()))


@pytest.fixture
async def metered(pool: Pool) -> AsyncIterator[tuple[SudokuPool, httpx.AsyncClient, str]]:
    port = free_port()
    app = create_app(Settings(metrics_port=port, api_keys=digest(KEY)), pool=pool)
    async with running(app) as client:
        yield app, client, f"http://127.0.0.1:{port}/metrics"


async def scrape(url: str) -> Samples:
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


async def test_a_scrape_after_a_known_sequence_shows_exactly_those_counts(
    metered: tuple[SudokuPool, httpx.AsyncClient, str], pool: Pool, records: list[dict[str, Any]]
) -> None:
    _, client, url = metered
    ids = [record["canonical_id"] for record in records]
    preflight = {"Origin": "https://example.org", "Access-Control-Request-Method": "GET"}
    sequence = [
        ("GET", f"/api/v2/puzzles/{ids[0]}", {}, 200),
        ("GET", f"/api/v2/puzzles/{ids[1]}", {}, 200),
        ("GET", f"/api/v2/puzzles/{ids[2]}", {"X-API-Key": KEY}, 200),
        ("GET", "/api/v2/puzzles/random", {}, 200),
        ("GET", "/api/v2/puzzles/random", {"X-API-Key": "not-issued"}, 401),
        ("GET", "/api/v2/puzzles/no-such-id", {}, 404),
        ("POST", "/api/v2/health", {}, 405),
        ("GET", "/api/v2/no/such/path", {}, 404),
        ("HEAD", f"/api/v1/puzzles/{ids[0]}", {}, 200),
        ("GET", f"/api/puzzles/{ids[0]}/solution", {}, 200),
        ("GET", f"/api/v2/puzzles/{ids[3]}/image", {}, 200),
        ("GET", f"/api/v2/puzzles/{ids[3]}/image", {}, 200),
        ("OPTIONS", f"/api/v2/puzzles/{ids[0]}", preflight, 204),
        ("GET", "/", {}, 200),
        ("GET", f"/p/{ids[0]}", {}, 200),
        ("GET", "/static/app.js", {}, 200),
    ]
    for method, path, headers, status in sequence:
        assert (await client.request(method, path, headers=headers)).status_code == status, path
    samples = await scrape(url)

    assert select(samples, "sudokupool_http_requests_total") == {
        request_labels("v2", "/api/v2/puzzles/{id}", "GET", 200): 3,
        request_labels("v2", "/api/v2/puzzles/random", "GET", 200): 1,
        request_labels("v2", "/api/v2/puzzles/random", "GET", 401): 1,
        request_labels("v2", "/api/v2/puzzles/{id}", "GET", 404): 1,
        request_labels("v2", "/api/v2/health", "POST", 405): 1,
        request_labels("v2", "unmatched", "GET", 404): 1,
        request_labels("v1", "/api/v1/puzzles/{id}", "HEAD", 200): 1,
        request_labels("unversioned", "/api/puzzles/{id}/solution", "GET", 200): 1,
        request_labels("v2", "/api/v2/puzzles/{id}/image", "GET", 200): 2,
        request_labels("v2", "/api/v2/puzzles/{id}", "OPTIONS", 204): 1,
        request_labels("site", "/", "GET", 200): 1,
        request_labels("site", "/p/{canonical_id}", "GET", 200): 1,
        request_labels("site", "/static/{path}", "GET", 200): 1,
    }
    # The histogram counts the same requests; its buckets are cumulative and end at the count.
    counts = select(samples, "sudokupool_http_request_duration_seconds_count")
    assert counts == select(samples, "sudokupool_http_requests_total")
    by_id = request_labels("v2", "/api/v2/puzzles/{id}", "GET", 200)
    buckets = {
        labels: value
        for labels, value in select(samples, "sudokupool_http_request_duration_seconds_bucket").items()
        if tuple(label for label in labels if label[0] != "le") == by_id
    }
    assert len(buckets) == len(BUCKETS) + 1
    by_bound = [value for _, value in sorted(buckets.items(), key=lambda item: float(dict(item[0])["le"]))]
    assert by_bound == sorted(by_bound) and by_bound[-1] == 3
    assert select(samples, "sudokupool_http_request_duration_seconds_sum")[by_id] > 0

    decisions = select(samples, "sudokupool_limiter_decisions_total")
    # Every /api/v2 request but the preflight went through the limiter: 9 admitted, one unknown key.
    assert decisions[(("outcome", "admitted"), ("tier", "anonymous"))] == 8
    assert decisions[(("outcome", "admitted"), ("tier", "keyed"))] == 1
    assert decisions[(("outcome", "unknown_key"), ("tier", "anonymous"))] == 1
    assert sum(decisions.values()) == 10

    assert samples[("sudokupool_image_cache_misses_total", frozenset())] == 1
    assert samples[("sudokupool_image_cache_hits_total", frozenset())] == 1
    assert samples[("sudokupool_image_renders_total", frozenset())] == 1
    assert samples[("sudokupool_image_cache_bytes", frozenset())] > 0
    for difficulty in ("easy", "medium", "hard", "expert"):
        expected = pool.count(difficulty.capitalize())
        assert samples[("sudokupool_pool_puzzles", frozenset({("difficulty", difficulty)}))] == expected
    exported = samples[("sudokupool_export_timestamp_seconds", frozenset())]
    assert exported == datetime(2026, 11, 22, 10, tzinfo=UTC).timestamp()  # from the export's name
    assert samples[("sudokupool_export_age_seconds", frozenset())] == pytest.approx(time.time() - exported, abs=5)
    assert samples[("sudokupool_storage_down", frozenset())] == 0
    # No Redis set: no Redis server to report on.
    assert select(samples, "sudokupool_redis_down") == {}
    resident = samples[("process_resident_memory_bytes", frozenset())]
    assert 0 < samples[("sudokupool_process_proportional_memory_bytes", frozenset())] <= resident
    assert samples[("sudokupool_http_requests_in_flight", frozenset())] == 0
    build = {"version": __version__, "server": "uvicorn", "python": platform.python_version()}
    assert select(samples, "sudokupool_build_info") == {tuple(sorted(build.items())): 1}

    # A second scrape adds only what happened since: one more request.
    assert (await client.get(f"/api/v2/puzzles/{ids[0]}")).status_code == 200
    again = select(await scrape(url), "sudokupool_http_requests_total")
    assert again[request_labels("v2", "/api/v2/puzzles/{id}", "GET", 200)] == 4


async def test_ids_and_invented_methods_never_become_label_values(
    metered: tuple[SudokuPool, httpx.AsyncClient, str], records: list[dict[str, Any]]
) -> None:
    _, client, url = metered
    ids = [record["canonical_id"] for record in records[:5]]
    made_up = [f"zz{n:06d}made-up-id" for n in range(5)]
    for code in ids + made_up:
        for path in (
            f"/api/v2/puzzles/{code}",
            f"/api/v1/puzzles/{code}/solution",
            f"/api/puzzles/{code}",
            f"/p/{code}",
        ):
            await client.get(path)
        await client.get(f"/api/v2/{code}")
        await client.get(f"/{code}")
    await client.request("BREW", f"/api/v2/puzzles/{ids[0]}")
    await client.request("PURGE", "/api/v1/stats")
    samples = await scrape(url)
    values = {value for _, labels in samples for _, value in labels}
    assert not [value for value in values for code in ids + made_up if code in value]
    methods = {dict(labels).get("method") for name, labels in samples if name == "sudokupool_http_requests_total"}
    assert methods == {"GET", "other"}


def test_the_request_tally_buckets_by_upper_bound_and_folds_unknown_methods() -> None:
    tally = RequestTally()
    route = ("v2", "/api/v2/puzzles/random")
    tally.observe(route, "GET", 200, BUCKETS[0])  # on the bound: that bucket (le)
    tally.observe(route, "GET", 200, BUCKETS[0] * 1.01)
    tally.observe(route, "GET", 200, 100.0)  # past the last bound: +Inf
    tally.observe(route, "MKCOL", 200, 0.0)
    series = tally.drain()
    assert series[(route, "GET", 200)][1:] == [1, 1] + [0] * (len(BUCKETS) - 2) + [1]
    assert series[(route, "other", 200)][0] == 0.0
    assert set(series) == {(route, "GET", 200), (route, "other", 200)}
    assert tally.drain() == {}


def listening_ports(pid: int) -> set[int]:
    """TCP ports the process ``pid`` and its children listen on (from /proc)."""
    pids = [
        pid,
        *(int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()),
    ]
    inodes = set()
    for each in pids:
        for fd in glob.glob(f"/proc/{each}/fd/*"):
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


@pytest.mark.slow
def test_without_the_setting_nothing_listens_but_the_api(tmp_path: Path) -> None:
    with run_server({}, tmp_path / "server.log") as running:
        api_port = int(running.url.rpartition(":")[2])
        assert listening_ports(running.process.pid) == {api_port}
        assert httpx.get(f"{running.url}/metrics").status_code == 404


def per_worker(directory: Path, name: str) -> dict[str, float]:
    """``name``'s total in each worker's own file."""
    found = {}
    for path in directory.glob("counter_*.db"):
        total = 0.0
        for metric in MultiProcessCollector.merge([str(path)]):
            total += sum(s.value for s in metric.samples if s.name == name)
        found[path.stem.rpartition("_")[2]] = total
    return found


@pytest.mark.slow
def test_with_two_workers_one_scrape_sums_both(tmp_path: Path) -> None:
    metrics_port = free_port()
    directory = tmp_path / "multiproc"
    env = {
        "WEB_CONCURRENCY": "2",
        "SUDOKUPOOL_METRICS_PORT": str(metrics_port),
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
    }
    with run_server(env, tmp_path / "server.log") as running:
        api_port = int(running.url.rpartition(":")[2])
        assert listening_ports(running.process.pid) == {api_port, metrics_port}
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        name = "sudokupool_http_requests_total"
        sent = 0
        # New connections until both workers have answered some (the kernel picks the worker).
        while sent < 400:
            for _ in range(10):
                assert httpx.get(f"{running.url}/api/v2/puzzles/random").status_code == 200
            sent += 10
            time.sleep(1.2)  # each worker writes its counts every second
            workers = per_worker(directory, name)
            if len([n for n in workers.values() if n > 0]) >= 2:
                break
        assert len([n for n in workers.values() if n > 0]) == 2
        # Every scrape, whichever worker answers it, shows the sum (health probes and the test's requests).
        totals = set()
        for _ in range(6):
            samples = parse(httpx.get(url).text)
            totals.add(samples[(name, frozenset(request_labels("v2", "/api/v2/puzzles/random", "GET", 200)))])
        assert totals == {sent}
        assert samples[("sudokupool_pool_puzzles", frozenset({("difficulty", "easy")}))] > 0
        # One series for the instance, whichever worker answers: the server that runs the workers.
        builds = select(samples, "sudokupool_build_info")
        assert [dict(labels)["server"] for labels in builds] == ["uvicorn"]
        # The proportional memory sums the workers' shares (a page shared by both counts once in all).
        proportional = samples[("sudokupool_process_proportional_memory_bytes", frozenset())]
        assert 0 < proportional <= samples[("process_resident_memory_bytes", frozenset())]


@pytest.mark.slow
def test_the_launcher_refuses_a_metrics_port_it_cannot_use(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "SUDOKUPOOL_METRICS_PORT": str(port)}
    done = subprocess.run(command(port), cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert f"SUDOKUPOOL_METRICS_PORT={port} is the API's port" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


async def test_sync_counts_refusals_failures_and_storage_outages(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    write_export(exports / "pool-20260101T000000Z.ndjson.gz", records[:5])
    port = free_port()
    app = create_app(Settings(exports=str(exports), sync_interval=0, metrics_port=port))
    await app.startup()
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        assert app.sync is not None
        # A truncated newer export: refused once, and the look fails; the next look does not download it again.
        data = (exports / "pool-20260101T000000Z.ndjson.gz").read_bytes()
        (exports / "pool-20260201T000000Z.ndjson.gz").write_bytes(data[:-100])
        assert await app.sync.check() is False
        assert await app.sync.check() is False
        samples = await scrape(url)
        counts = {name: samples[(f"sudokupool_sync_{name}_total", frozenset())] for name in SYNC}
        assert counts == {"attempts": 3, "successes": 1, "failures": 2, "refusals": 1}
        assert samples[("sudokupool_storage_down", frozenset())] == 0
        assert samples[("sudokupool_sync_last_success_timestamp_seconds", frozenset())] == pytest.approx(
            time.time(), abs=30
        )
        # Storage away: the look fails and the outage shows until a look reaches it again.
        exports.rename(tmp_path / "away")
        assert await app.sync.check() is False
        samples = await scrape(url)
        assert samples[("sudokupool_storage_down", frozenset())] == 1
        assert samples[("sudokupool_sync_failures_total", frozenset())] == 3
        (tmp_path / "away").rename(exports)
        await app.sync.check()
        assert (await scrape(url))[("sudokupool_storage_down", frozenset())] == 0
    finally:
        await app.shutdown()


@pytest.mark.slow
async def test_a_redis_outage_shows_as_down_with_each_request_limited_in_memory(pool: Pool) -> None:
    port = free_port()
    # Nothing listens on the Redis port: every call fails at once.
    redis_port = free_port()
    settings = Settings(metrics_port=port, redis_url=f"redis://127.0.0.1:{redis_port}/0", redis_timeout=0.2)
    app = create_app(settings, pool=pool)
    async with running(app) as client:
        for _ in range(3):
            assert (await client.get("/api/v2/puzzles/random")).status_code == 200
        samples = await scrape(f"http://127.0.0.1:{port}/metrics")
        assert select(samples, "sudokupool_redis_down") == {(("node", f"127.0.0.1:{redis_port}"),): 1}
        assert samples[("sudokupool_limiter_redis_fallbacks_total", frozenset())] == 3
        admitted = samples[
            ("sudokupool_limiter_decisions_total", frozenset({("tier", "anonymous"), ("outcome", "admitted")}))
        ]
        assert admitted == 3


@pytest.mark.slow
async def test_a_redis_outage_ends_when_the_server_answers_without_a_request(pool: Pool, tmp_path: Path) -> None:
    port = free_port()
    redis = ValkeyServer(tmp_path)
    node = f"127.0.0.1:{redis.port}"
    settings = Settings(metrics_port=port, redis_url=redis.url, redis_timeout=0.2)
    app = create_app(settings, pool=pool)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        async with running(app) as client:
            # Redis not started yet: the request's call fails and the outage starts.
            assert (await client.get("/api/v2/puzzles/random")).status_code == 200
            assert select(await scrape(url), "sudokupool_redis_down") == {(("node", node),): 1}
            await asyncio.to_thread(redis.start)
            answering = time.monotonic()
            # No request from here on: the app's own probe (a PING a second) finds the server back.
            while time.monotonic() - answering < 10:
                down = select(await scrape(url), "sudokupool_redis_down")
                if down == {(("node", node),): 0}:
                    break
                await asyncio.sleep(0.1)
            assert down == {(("node", node),): 0}
            assert (await scrape(url))[("sudokupool_limiter_redis_fallbacks_total", frozenset())] == 1
    finally:
        redis.stop()


def test_status_codes_are_labelled_as_they_are_from_a_closed_set() -> None:
    assert [code_label(code) for code in (200, 304, 404, 429, 503)] == ["200", "304", "404", "429", "503"]
    # Codes outside the set count under their class: a made-up code makes no series of its own.
    assert [code_label(code) for code in (218, 418, 499, 599, 103)] == ["2xx", "4xx", "4xx", "5xx", "1xx"]


async def test_a_refusal_is_counted_under_its_own_code(pool: Pool) -> None:
    port = free_port()
    app = create_app(Settings(metrics_port=port, limit_anonymous=2), pool=pool)
    async with running(app) as client:
        codes = [(await client.get("/api/v2/puzzles/random")).status_code for _ in range(3)]
        samples = await scrape(f"http://127.0.0.1:{port}/metrics")
    assert codes == [200, 200, 429]
    assert select(samples, "sudokupool_http_requests_total") == {
        request_labels("v2", "/api/v2/puzzles/random", "GET", 200): 2,
        request_labels("v2", "/api/v2/puzzles/random", "GET", 429): 1,
    }


async def test_requests_in_flight_are_those_routed_and_not_answered_yet(
    metered: tuple[SudokuPool, httpx.AsyncClient, str], records: list[dict[str, Any]]
) -> None:
    app, _, url = metered
    release = asyncio.Event()
    started = asyncio.Event()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        started.set()
        await release.wait()  # a slow client: the answer is not handed over yet

    paths = [f"/api/v2/puzzles/{records[0]['canonical_id']}", "/"]
    held = []
    for path in paths:
        scope = {
            "type": "http", "http_version": "1.1", "method": "GET", "scheme": "http", "path": path,
            "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": [],
            "client": ("203.0.113.9", 1234), "server": ("testserver", 80),
        }  # fmt: skip
        held.append(asyncio.create_task(app(scope, receive, send)))
        await started.wait()
        started.clear()
    assert (await scrape(url))[("sudokupool_http_requests_in_flight", frozenset())] == 2
    release.set()
    await asyncio.gather(*held)
    assert (await scrape(url))[("sudokupool_http_requests_in_flight", frozenset())] == 0


async def test_a_busy_event_loop_shows_as_lag(metered: tuple[SudokuPool, httpx.AsyncClient, str]) -> None:
    _, _, url = metered
    time.sleep(0.6)  # noqa: ASYNC251 - the point: the event loop held up
    await asyncio.sleep(0.6)  # the sampler's timer fires late once, then on time
    samples = await scrape(url)
    count = samples[("sudokupool_event_loop_lag_seconds_count", frozenset())]
    under = samples[("sudokupool_event_loop_lag_seconds_bucket", frozenset({("le", "0.25")}))]
    assert count >= 2
    assert samples[("sudokupool_event_loop_lag_seconds_sum", frozenset())] >= 0.3
    # The timer due during the hold fired at least 0.35 s late: above the 0.25 s bucket.
    assert under <= count - 1


async def test_a_load_from_storage_shows_its_bytes_and_durations(
    s3_env: SeaweedS3, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    bucket = s3_env.new_bucket()
    body = write_export(tmp_path / "pool-20260101T000000Z.ndjson.gz", records[:20]).read_bytes()
    s3_env.put(bucket, "exports/pool-20260101T000000Z.ndjson.gz", body)
    port = free_port()
    settings = Settings(
        exports=f"s3://{bucket}/exports/",
        s3_endpoint_url=s3_env.endpoint_url,
        s3_addressing_style="path",
        sync_interval=0,
        metrics_port=port,
    )
    app = create_app(settings)
    await app.startup()
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        samples = await scrape(url)
        assert samples[("sudokupool_storage_downloaded_bytes_total", frozenset())] == len(body)
        assert samples[("sudokupool_sync_last_load_seconds", frozenset())] > 0
        assert samples[("sudokupool_sync_last_swap_seconds", frozenset())] >= 0
        newer = write_export(tmp_path / "pool-20260201T000000Z.ndjson.gz", records[:30]).read_bytes()
        s3_env.put(bucket, "exports/pool-20260201T000000Z.ndjson.gz", newer)
        assert app.sync is not None and await app.sync.check()
        samples = await scrape(url)
        assert samples[("sudokupool_storage_downloaded_bytes_total", frozenset())] == len(body) + len(newer)
    finally:
        await app.shutdown()
