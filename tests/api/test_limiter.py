from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import orjson
import pytest

from sudokupool.api.clientip import CLIENT_ID
from sudokupool.api.limiter import RateLimiter, presented_key
from sudokupool.config import Settings
from sudokupool.ratelimit import Limits, MemoryStore
from sudokupool.ratelimit.keys import Keyring, digest
from sudokupool.ratelimit.redis import RedisStore
from tests.helpers import MINUTE, FakeClock
from tests.ratelimit.apps import create_test_app
from tests.servers import run_server
from tests.valkey import ValkeyServer

KEYED = "keyed-test-key-0123456789abcdef"
PRO = "pro-test-key-0123456789abcdef"
SETTINGS = Settings(limit_anonymous=3, limit_keyed=5, limit_pro=7, api_keys=f"{digest(KEYED)}, {digest(PRO)}:pro")
RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def client_for(app: object, address: str = "203.0.113.7") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 4321))  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(create_test_app(SETTINGS, store=MemoryStore(clock=FakeClock(MINUTE + 15)))) as client:
        yield client


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        pytest.param("/api/v2/health", {}, 200, id="200"),
        pytest.param("/api/v2/cached", {"if-none-match": '"v1"'}, 304, id="304"),
        pytest.param("/api/v2/missing", {}, 404, id="404-from-handler"),
        pytest.param("/api/v2/no/such/path", {}, 404, id="404-from-router"),
        pytest.param("/api/v2/boom", {}, 500, id="500"),
    ],
)
async def test_headers_on_every_status(
    client: httpx.AsyncClient, path: str, headers: dict[str, str], status: int
) -> None:
    response = await client.get(path, headers=headers)
    assert response.status_code == status
    assert response.headers["x-ratelimit-limit"] == "3"
    assert response.headers["x-ratelimit-remaining"] == "2"
    assert response.headers["x-ratelimit-reset"] == "45"


@pytest.mark.anyio
async def test_429_after_the_limit_with_retry_after(client: httpx.AsyncClient) -> None:
    statuses = [(await client.get("/api/v2/health")).status_code for _ in range(3)]
    response = await client.get("/api/v2/health")
    assert statuses == [200, 200, 200]
    assert response.status_code == 429
    assert response.headers["retry-after"] == "45"
    assert response.headers["x-ratelimit-limit"] == "3"
    assert response.headers["x-ratelimit-remaining"] == "0"
    assert response.headers["x-ratelimit-reset"] == "45"
    assert response.headers["content-type"] == "application/json"
    assert response.content == orjson.dumps({"error": "rate limit exceeded", "retry_after_seconds": 45})


@pytest.mark.anyio
@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v2/openapi.json", id="openapi"),
        pytest.param("/api/v1/health", id="v1-alias"),
    ],
)
async def test_exempt_paths_have_no_limit_and_no_headers(client: httpx.AsyncClient, path: str) -> None:
    responses = [await client.get(path, headers={"x-api-key": "wrong"}) for _ in range(5)]
    assert [r.status_code for r in responses] == [200] * 5
    assert not any(name in responses[-1].headers for name in RATE_HEADERS)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("key", "limit"),
    [
        pytest.param(KEYED, "5", id="keyed"),
        pytest.param(PRO, "7", id="pro"),
    ],
)
async def test_a_valid_key_selects_its_tier_and_its_own_window(client: httpx.AsyncClient, key: str, limit: str) -> None:
    for _ in range(3):
        await client.get("/api/v2/health")
    response = await client.get("/api/v2/health", headers={"x-api-key": key})
    assert response.status_code == 200
    assert response.headers["x-ratelimit-limit"] == limit
    assert response.headers["x-ratelimit-remaining"] == str(int(limit) - 1)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "headers"),
    [
        pytest.param("/api/v2/health", {"x-api-key": "not-issued"}, id="header"),
        pytest.param("/api/v2/health?api_key=not-issued", {}, id="query"),
        pytest.param("/api/v2/health", {"x-api-key": ""}, id="empty-header"),
        pytest.param(f"/api/v2/health?api_key={KEYED}", {"x-api-key": "not-issued"}, id="header-wins-over-query"),
    ],
)
async def test_an_unknown_key_is_401_and_counts_against_the_address(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> None:
    guesses = [await client.get(url, headers=headers) for _ in range(4)]
    anonymous = await client.get("/api/v2/health")
    assert [r.status_code for r in guesses] == [401, 401, 401, 429]
    assert guesses[0].content == b'{"error":"unknown API key"}'
    assert guesses[0].headers["x-ratelimit-limit"] == "3"
    assert guesses[0].headers["x-ratelimit-remaining"] == "2"
    assert guesses[3].headers["retry-after"] == "45"
    assert anonymous.status_code == 429


@pytest.mark.anyio
async def test_the_header_key_wins_over_the_query_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/health?api_key=not-issued", headers={"x-api-key": KEYED})
    assert response.status_code == 200
    assert response.headers["x-ratelimit-limit"] == "5"


@pytest.mark.anyio
async def test_the_query_key_is_read_when_no_header_is_sent(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/health", params={"difficulty": "easy", "api_key": PRO})
    assert response.status_code == 200
    assert response.headers["x-ratelimit-limit"] == "7"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param(b"", None, id="none"),
        pytest.param(b"difficulty=easy", None, id="other-parameter"),
        pytest.param(b"my_api_key=x", None, id="longer-name"),
        pytest.param(b"a=1&api_key=abc&api_key=def", b"abc", id="first-wins"),
        pytest.param(b"api_key=a%2Bb+c", b"a+b c", id="percent-decoded"),
        pytest.param(b"api_key", b"", id="no-value"),
    ],
)
def test_presented_key_from_the_query(query: bytes, expected: bytes | None) -> None:
    assert presented_key({"headers": [], "query_string": query}) == expected


@pytest.mark.parametrize(
    ("headers", "query", "expected"),
    [
        pytest.param([(b"x-api-key", b"abc ")], b"", b"abc", id="header-trailing-space"),
        pytest.param([(b"x-api-key", b"\t abc\t")], b"", b"abc", id="header-tabs"),
        pytest.param([(b"x-api-key", b" ")], b"", b"", id="header-blank"),
        pytest.param([], b"api_key=+abc%20%09", b"abc", id="query-spaces-and-tab"),
        pytest.param([], b"api_key=a%20b", b"a b", id="query-inner-space-kept"),
    ],
)
def test_presented_key_is_trimmed(headers: list[tuple[bytes, bytes]], query: bytes, expected: bytes) -> None:
    assert presented_key({"headers": headers, "query_string": query}) == expected


@pytest.mark.slow
def test_a_key_sent_with_blanks_around_it_resolves_on_the_real_server(tmp_path: Path) -> None:
    environ = {"SUDOKUPOOL_API_KEYS": digest(KEYED), "SUDOKUPOOL_LIMIT_KEYED": "5"}
    with run_server(environ, tmp_path / "server.log") as server:
        host, port = server.url.removeprefix("http://").split(":")
        # A raw request: HTTP clients refuse to send a header value that ends in a blank, but people do.
        statuses = []
        for value in (f"{KEYED} ", f"{KEYED}\t", f" {KEYED}  "):
            with socket.create_connection((host, int(port)), timeout=10) as connection:
                request = f"GET /api/v2/health HTTP/1.1\r\nHost: x\r\nX-API-Key: {value}\r\nConnection: close\r\n\r\n"
                connection.sendall(request.encode())
                head = connection.makefile("rb").read().split(b"\r\n\r\n")[0].lower()
            statuses.append((head.split(b"\r\n")[0], b"x-ratelimit-limit: 5" in head.split(b"\r\n")))
        query = httpx.get(f"{server.url}/api/v2/health", params={"api_key": f" {KEYED}\t"}, timeout=10)
    assert statuses == [(b"http/1.1 200 ok", True)] * 3
    assert query.status_code == 200
    assert query.headers["x-ratelimit-limit"] == "5"


def test_identify_resolves_keys_and_remembers_only_issued_ones() -> None:
    limiter = RateLimiter(
        store=MemoryStore(), keyring=Keyring.from_settings(SETTINGS), limits=Limits.from_settings(SETTINGS)
    )

    def scope(key: bytes | None) -> dict[str, object]:
        headers = [] if key is None else [(b"x-api-key", key)]
        return {"headers": headers, "query_string": b"", CLIENT_ID: "203.0.113.7"}

    for n in range(1000):
        assert limiter.identify(scope(f"guess-{n}".encode())) == ("ip:203.0.113.7", 3, False)
    for _ in range(3):  # the first resolves the digest, the next ones are remembered: the same answer
        assert limiter.identify(scope(KEYED.encode())) == (f"key:{digest(KEYED)}", 5, True)
        assert limiter.identify(scope(PRO.encode())) == (f"key:{digest(PRO)}", 7, True)
    assert limiter.identify(scope(None)) == ("ip:203.0.113.7", 3, True)
    # A thousand guesses left nothing behind: memory holds at most one entry per issued key.
    assert len(limiter._issued) == 2


@pytest.mark.anyio
async def test_ipv6_clients_share_a_window_per_64(client: httpx.AsyncClient) -> None:
    app = create_test_app(SETTINGS, store=MemoryStore(clock=FakeClock(MINUTE + 15)))
    statuses = []
    for host in ("2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3", "2001:db8:1:2::4"):
        async with client_for(app, host) as one:
            statuses.append((await one.get("/api/v2/health")).status_code)
    async with client_for(app, "2001:db8:1:3::1") as neighbour:
        other = await neighbour.get("/api/v2/health")
    assert statuses == [200, 200, 200, 429]
    assert other.status_code == 200


async def _hammer(clients: list[httpx.AsyncClient], count: int) -> list[int]:
    statuses: list[int] = []

    async def one(client: httpx.AsyncClient) -> None:
        statuses.append((await client.get("/api/v2/health")).status_code)

    async with anyio.create_task_group() as tasks:
        for n in range(count):
            tasks.start_soon(one, clients[n % len(clients)])
    return statuses


@pytest.mark.anyio
async def test_200_concurrent_requests_admit_exactly_60_in_process() -> None:
    settings = Settings(limit_anonymous=60)
    async with client_for(create_test_app(settings, store=MemoryStore(clock=FakeClock(MINUTE + 1)))) as client:
        statuses = await _hammer([client], 200)
    assert statuses.count(200) == 60
    assert statuses.count(429) == 140


@pytest.mark.anyio
async def test_200_concurrent_requests_admit_exactly_60_across_two_instances_on_redis(valkey: ValkeyServer) -> None:
    settings = Settings(limit_anonymous=60, redis_url=valkey.url, redis_timeout=2.0)
    stores = [RedisStore.from_url(valkey.url, timeout=2.0, clock=FakeClock(MINUTE + 1)) for _ in range(2)]
    apps = [create_test_app(settings, store=store) for store in stores]
    try:
        async with client_for(apps[0]) as first, client_for(apps[1]) as second:
            statuses = await _hammer([first, second], 200)
    finally:
        for store in stores:
            await store.aclose()
    assert statuses.count(200) == 60
    assert statuses.count(429) == 140


@pytest.mark.anyio
async def test_closed_mode_answers_503_with_headers_when_redis_is_down(valkey_restartable: ValkeyServer) -> None:
    settings = Settings(redis_url=valkey_restartable.url, redis_timeout=0.5, redis_failure_mode="closed")
    store = RedisStore.from_url(settings.redis_url, timeout=0.5, failure_mode="closed", retry_interval=0.0)
    app = create_test_app(settings, store=store)
    try:
        async with client_for(app) as client:
            before = await client.get("/api/v2/health")
            valkey_restartable.stop()
            during = await client.get("/api/v2/health")
            exempt = await client.get("/api/v2/openapi.json")
    finally:
        await store.aclose()
    assert before.status_code == 200
    assert during.status_code == 503
    assert during.content == b'{"error":"rate limiter unavailable"}'
    assert during.headers["x-ratelimit-limit"] == "60"
    assert during.headers["x-ratelimit-remaining"] == "0"
    assert exempt.status_code == 200


@pytest.mark.anyio
async def test_open_mode_keeps_serving_when_redis_is_down(valkey_restartable: ValkeyServer) -> None:
    settings = Settings(redis_url=valkey_restartable.url, redis_timeout=0.5)
    store = RedisStore.from_url(settings.redis_url, timeout=0.5, failure_mode="open")
    app = create_test_app(settings, store=store)
    try:
        async with client_for(app) as client:
            before = await client.get("/api/v2/health")
            valkey_restartable.stop()
            during = [await client.get("/api/v2/health") for _ in range(3)]
    finally:
        await store.aclose()
    assert before.status_code == 200
    assert [r.status_code for r in during] == [200, 200, 200]
    assert [r.headers["x-ratelimit-remaining"] for r in during] == ["59", "58", "57"]


async def _charged(store: MemoryStore | RedisStore) -> list[object]:
    limiter = RateLimiter(store=store, keyring=Keyring.from_settings(SETTINGS), limits=Limits(anonymous=10))
    scope = {"headers": [], "query_string": b"", CLIENT_ID: "203.0.113.9"}
    headers = await limiter.admit(scope)
    assert isinstance(headers, list)
    seen: list[object] = [dict(headers)[b"x-ratelimit-remaining"]]
    # Work that costs 5 requests in all: 4 more; the headers the request got now say what is left.
    assert await limiter.charge(scope, 4, headers) is None
    seen.append(dict(headers)[b"x-ratelimit-remaining"])
    refusal = await limiter.charge(scope, 6, headers)  # past the limit of 10
    assert refusal is not None
    seen += [refusal.status, dict(refusal.headers)[b"retry-after"] == dict(refusal.headers)[b"x-ratelimit-reset"]]
    return seen


@pytest.mark.anyio
async def test_charging_work_counts_it_in_the_window_and_refuses_past_the_limit() -> None:
    assert await _charged(MemoryStore(clock=FakeClock(MINUTE + 1))) == [b"9", b"5", 429, True]


@pytest.mark.anyio
async def test_charging_work_on_redis_counts_it_in_the_shared_window(valkey: ValkeyServer) -> None:
    store = RedisStore.from_url(valkey.url, timeout=2.0, clock=FakeClock(3 * MINUTE + 1), key_prefix="charge:")
    try:
        assert await _charged(store) == [b"9", b"5", 429, True]
        assert store.calls == 3  # the admission, then each charge in one round trip
    finally:
        await store.aclose()
