from __future__ import annotations

import io
from typing import Any
from urllib.parse import parse_qsl

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sudokupool.app
from sudokupool.api.query import query
from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.export import PUBLIC_FIELD_NAMES
from sudokupool.pool.pool import Pool
from sudokupool.ratelimit.memory import MemoryStore
from tests.factories import build_pool
from tests.helpers import MINUTE, FakeClock

pytestmark = pytest.mark.anyio

PREFIXES = ["/api/v2", "/api/v1"]


@pytest.mark.parametrize("prefix", PREFIXES)
async def test_health(client: httpx.AsyncClient, pool: Pool, prefix: str) -> None:
    response = await client.get(f"{prefix}/health")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["puzzles"] == len(pool)
    assert body["export"]["key"] == pool.info.export_key


async def test_stats(client: httpx.AsyncClient, pool: Pool) -> None:
    response = await client.get("/api/v2/stats")
    assert response.status_code == 200
    assert response.json() == orjson.loads(pool.stats_body)


@pytest.mark.parametrize("prefix", [*PREFIXES, "/api"])
async def test_puzzle_by_id(client: httpx.AsyncClient, records: list[dict[str, Any]], prefix: str) -> None:
    record = records[5]
    response = await client.get(f"{prefix}/puzzles/{record['canonical_id']}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["etag"].startswith('W/"')
    assert response.headers["cache-control"] == "public, max-age=3600"
    body = response.json()
    assert list(body) == list(PUBLIC_FIELD_NAMES)
    assert body["puzzle"] == record["puzzle"]
    assert "solution" not in body


async def test_puzzle_by_id_is_case_insensitive(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    response = await client.get(f"/api/v2/puzzles/{records[0]['canonical_id'].lower()}")
    assert response.status_code == 200
    assert response.json()["canonical_id"] == records[0]["canonical_id"]


@pytest.mark.parametrize("prefix", [*PREFIXES, "/api"])
async def test_solution(client: httpx.AsyncClient, records: list[dict[str, Any]], prefix: str) -> None:
    record = records[2]
    response = await client.get(f"{prefix}/puzzles/{record['canonical_id']}/solution")
    assert response.status_code == 200
    assert response.headers["etag"].startswith('W/"')
    assert response.json() == {"canonical_id": record["canonical_id"], "solution": record["solution"]}


@pytest.mark.parametrize("path", ["", "/solution"])
async def test_if_none_match_answers_304(client: httpx.AsyncClient, records: list[dict[str, Any]], path: str) -> None:
    url = f"/api/v2/puzzles/{records[1]['canonical_id']}{path}"
    first = await client.get(url)
    etag = first.headers["etag"]
    for header in [etag, etag.removeprefix("W/"), f'"other", {etag}', "*"]:
        again = await client.get(url, headers={"If-None-Match": header})
        assert again.status_code == 304
        assert again.headers["etag"] == etag
        assert again.content == b""
    changed = await client.get(url, headers={"If-None-Match": '"something-else"'})
    assert changed.status_code == 200


@pytest.mark.parametrize("prefix", [*PREFIXES, "/api"])
async def test_random_is_not_cacheable(client: httpx.AsyncClient, prefix: str) -> None:
    response = await client.get(f"{prefix}/puzzles/random")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert len(response.json()["puzzle"]) == 81


@pytest.mark.parametrize("value", ["easy", "EASY", "Easy", "hard", "Expert", "medium"])
async def test_random_by_difficulty(client: httpx.AsyncClient, records: list[dict[str, Any]], value: str) -> None:
    wanted = value.capitalize()
    present = any(r["difficulty"] == wanted for r in records)
    response = await client.get("/api/v2/puzzles/random", params={"difficulty": value})
    if present:
        assert response.status_code == 200
        assert response.json()["difficulty"] == wanted
    else:
        assert response.status_code == 404
        assert response.json() == {"error": f"no {wanted} puzzle in the pool"}


async def test_random_with_a_missing_difficulty_is_404(records: list[dict[str, Any]]) -> None:
    pool = build_pool([r for r in records if r["difficulty"] == "Easy"])
    transport = httpx.ASGITransport(app=create_app(Settings(), pool=pool))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/api/v2/puzzles/random?difficulty=expert")
    assert response.status_code == 404
    assert response.json() == {"error": "no Expert puzzle in the pool"}


async def test_random_with_an_invalid_difficulty_is_400_naming_the_values(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/puzzles/random?difficulty=insane")
    assert response.status_code == 400
    assert response.json() == {"error": "difficulty must be one of easy, medium, hard, expert"}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v2/puzzles/NOSUCHPUZZLE0", id="unknown-id"),
        pytest.param("/api/v2/puzzles/NOSUCHPUZZLE0/solution", id="unknown-solution"),
        pytest.param("/api/v2/puzzles/" + "A" * 5000, id="very-long-id"),
        pytest.param("/api/v2/puzzles/%C3%A9t%C3%A9", id="non-ascii-id"),
        pytest.param("/api/v2/puzzles/..%2F..%2Fetc%2Fpasswd", id="dot-dot"),
        pytest.param("/api/v2/nothing-here", id="unknown-v2-path"),
        pytest.param("/api/v3/health", id="unknown-version"),
        pytest.param("/api/health", id="unversioned-health-is-not-a-path"),
        pytest.param("/api", id="api-root"),
        pytest.param("/nothing", id="outside-api"),
    ],
)
async def test_not_found_is_json(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert set(response.json()) == {"error"}


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
async def test_other_methods_are_405_with_allow(client: httpx.AsyncClient, method: str) -> None:
    response = await client.request(method, "/api/v2/stats")
    assert response.status_code == 405
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}
    assert response.json() == {"error": "method not allowed"}


async def test_head_works_wherever_get_does(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    url = f"/api/v2/puzzles/{records[0]['canonical_id']}"
    got = await client.get(url)
    head = await client.head(url)
    assert head.status_code == 200
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["etag"] == got.headers["etag"]


async def test_cors_preflight_allows_the_key_header(client: httpx.AsyncClient) -> None:
    response = await client.options(
        "/api/v2/puzzles/random",
        headers={
            "Origin": "https://example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "X-API-Key",
        },
    )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "*"
    assert "x-api-key" in response.headers["access-control-allow-headers"].lower()
    assert "GET" in response.headers["access-control-allow-methods"]
    assert "x-ratelimit-limit" not in response.headers


async def test_cors_preflight_refuses_other_headers(client: httpx.AsyncClient) -> None:
    response = await client.options(
        "/api/v2/stats",
        headers={
            "Origin": "https://example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "X-Evil",
        },
    )
    assert response.status_code == 400
    assert response.headers["access-control-allow-headers"] == ""
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "error": "CORS preflight refused: request header(s) x-evil not allowed (allowed: if-none-match, x-api-key)"
    }


@pytest.mark.parametrize(
    ("tail", "error"),
    [
        pytest.param("%2fsolution", "no puzzle has that id", id="solution"),
        pytest.param("%2Fsolution", "no puzzle has that id", id="solution-upper"),
        pytest.param("%2Fimage", "no puzzle has that id", id="image"),
        pytest.param("%2f", "no puzzle has that id", id="trailing"),
        pytest.param("/solution%2f", "not found", id="after-the-tail"),
    ],
)
async def test_an_encoded_slash_is_part_of_the_id(
    client: httpx.AsyncClient, records: list[dict[str, Any]], tail: str, error: str
) -> None:
    for prefix in ("/api/v2", "/api/v1", "/api"):
        response = await client.get(f"{prefix}/puzzles/{records[0]['canonical_id']}{tail}")
        assert response.status_code == 404
        assert response.json() == {"error": error}


@pytest.mark.parametrize(
    "tail",
    [pytest.param("/", id="record"), pytest.param("/solution/", id="solution"), pytest.param("/image/", id="image")],
)
async def test_a_trailing_slash_is_not_a_path_of_the_api(
    client: httpx.AsyncClient, records: list[dict[str, Any]], tail: str
) -> None:
    for prefix in ("/api/v2", "/api/v1", "/api"):
        response = await client.get(f"{prefix}/puzzles/{records[0]['canonical_id']}{tail}")
        assert response.status_code == 404
        assert response.json() == {"error": "not found"}
    response = await client.get("/api/v2/puzzles/random/")
    assert response.status_code == 404
    assert response.json() == {"error": "not found"}


async def test_an_encoded_character_that_is_not_a_slash_still_decodes(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    encoded = "".join(f"%{ord(c):02X}" for c in records[0]["canonical_id"])
    response = await client.get(f"/api/v2/puzzles/{encoded}/solution?x=a/b")
    assert response.status_code == 200
    assert response.json()["canonical_id"] == records[0]["canonical_id"]


async def test_every_answer_carries_the_cors_headers_with_or_without_origin(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    # A shared cache stores an answer whoever asked first and hands it to browsers too: the copy fetched
    # without Origin must let them read it, so the headers never depend on Origin (and nothing varies on it).
    puzzle = records[0]["canonical_id"]
    paths = [
        f"/api/v2/puzzles/{puzzle}",
        f"/api/v1/puzzles/{puzzle}/solution",
        f"/api/puzzles/{puzzle}/image",
        "/api/v2/puzzles/random",
        "/api/v2/puzzles/no-such-id",
        "/api/v2/stats",
        "/",
        "/static/app.js",
    ]
    for path in paths:
        plain = await client.get(path)
        cross = await client.get(path, headers={"Origin": "https://example.org"})
        for response in (plain, cross):
            assert response.headers["access-control-allow-origin"] == "*", path
            assert "origin" not in response.headers.get("vary", "").lower(), path
        assert plain.headers["access-control-expose-headers"] == cross.headers["access-control-expose-headers"]
    etag = (await client.get(paths[0])).headers["etag"]
    not_modified = await client.get(paths[0], headers={"If-None-Match": etag})
    assert not_modified.status_code == 304
    assert not_modified.headers["access-control-allow-origin"] == "*"


async def test_cors_exposes_the_rate_limit_headers(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/stats", headers={"Origin": "https://example.org"})
    assert response.headers["access-control-allow-origin"] == "*"
    exposed = {h.strip().lower() for h in response.headers["access-control-expose-headers"].split(",")}
    assert exposed >= {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", "etag"}


async def test_activity_counts_plays_and_downloads(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    await client.get("/api/v2/puzzles/random")
    await client.get(f"/api/v1/puzzles/{records[0]['canonical_id']}")
    await client.get(f"/api/puzzles/{records[0]['canonical_id']}/solution")
    response = await client.get("/api/v2/stats/activity")
    assert response.status_code == 200
    body = response.json()
    assert body["scope"] == "instance"
    assert "since it started" in body["covers"]
    assert body["plays"] == {"random": 1, "by_id": 1, "daily": 0, "total": 2}
    assert body["downloads"]["solution"] == 1


async def test_an_unexpected_error_is_a_json_500_without_traceback(
    pool: Pool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: Pool, difficulty: str | None = None) -> int:
        raise RuntimeError("secret internals")

    app = create_app(Settings(), pool=pool)
    monkeypatch.setattr(Pool, "pick", broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/api/v2/puzzles/random")
    assert response.status_code == 500
    assert response.json() == {"error": "internal server error"}
    assert "secret" not in response.text
    assert "secret internals" in caplog.text


@pytest.mark.parametrize("prefix", [*PREFIXES, "/api"])
@pytest.mark.parametrize("variant", ["puzzle", "solution"])
async def test_image_draws_the_grid(
    client: httpx.AsyncClient, records: list[dict[str, Any]], prefix: str, variant: str
) -> None:
    from PIL import Image

    record = records[4]
    response = await client.get(f"{prefix}/puzzles/{record['canonical_id']}/image", params={"variant": variant})
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert response.headers["etag"].endswith(f'-{variant[0]}"')
    assert response.headers["cache-control"] == "public, max-age=3600"
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "PNG"
    assert image.size[0] == image.size[1] >= 200


async def test_image_defaults_to_the_puzzle_variant(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    url = f"/api/v2/puzzles/{records[0]['canonical_id']}/image"
    default = await client.get(url)
    puzzle = await client.get(url, params={"variant": "puzzle"})
    solution = await client.get(url, params={"variant": "solution"})
    assert default.content == puzzle.content
    assert default.content != solution.content


@pytest.mark.parametrize("query", ["variant=sketch", "variant=", "variant"])
async def test_image_with_an_invalid_variant_is_400(
    client: httpx.AsyncClient, records: list[dict[str, Any]], query: str
) -> None:
    response = await client.get(f"/api/v2/puzzles/{records[0]['canonical_id']}/image?{query}")
    assert response.status_code == 400
    assert response.json() == {"error": "variant must be one of puzzle, solution"}


async def test_image_of_an_unknown_id_is_json_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/puzzles/NOSUCHPUZZLE0/image")
    assert response.status_code == 404
    assert response.json() == {"error": "no puzzle has that id"}


async def test_image_answers_304_without_rendering(pool: Pool, records: list[dict[str, Any]]) -> None:
    app = create_app(Settings(), pool=pool)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        url = f"/api/v2/puzzles/{records[0]['canonical_id']}/image"
        first = await client.get(url)
        again = await client.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.headers["etag"] == first.headers["etag"]
    assert app.runtime.images.stats()["renders"] == 1


async def test_concurrent_requests_for_one_uncached_image_render_it_once(
    pool: Pool, records: list[dict[str, Any]]
) -> None:
    import anyio

    app = create_app(Settings(), pool=pool)
    transport = httpx.ASGITransport(app=app)
    url = f"/api/v2/puzzles/{records[7]['canonical_id']}/image?variant=solution"
    statuses: list[int] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:

        async def fetch() -> None:
            statuses.append((await client.get(url)).status_code)

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(fetch)
    assert statuses == [200] * 20
    assert app.runtime.images.stats()["renders"] == 1


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v2/stats", id="200"),
        pytest.param("/api/v2/puzzles/NOSUCHPUZZLE0", id="404-handler"),
        pytest.param("/api/v2/nothing", id="404-router"),
        pytest.param("/api/v2/puzzles/random?difficulty=x", id="400"),
    ],
)
async def test_v2_responses_carry_the_rate_limit_headers(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.headers["x-ratelimit-limit"] == "60"
    assert 0 <= int(response.headers["x-ratelimit-remaining"]) < 60
    assert 1 <= int(response.headers["x-ratelimit-reset"]) <= 60


@pytest.mark.parametrize(
    "path", ["/api/v2/openapi.json", "/api/v1/stats", "/api/v1/openapi.json", "/api/puzzles/random"]
)
async def test_openapi_v1_and_unversioned_paths_are_not_limited(client: httpx.AsyncClient, path: str) -> None:
    for _ in range(3):
        response = await client.get(path)
        assert response.status_code == 200
        assert "x-ratelimit-limit" not in response.headers


async def test_v2_is_limited_per_client_and_v1_is_not(pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    # The window's clock stands a second into a minute: the requests never straddle a window's end.
    clock = FakeClock(MINUTE + 1)
    monkeypatch.setattr(sudokupool.app, "make_store", lambda settings, **_: MemoryStore(clock=clock))
    app = create_app(Settings(limit_anonymous=3), pool=pool)
    transport = httpx.ASGITransport(app=app, client=("198.51.100.9", 1000))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        statuses = [(await client.get("/api/v2/stats")).status_code for _ in range(4)]
        limited = await client.get("/api/v2/stats")
        alias = await client.get("/api/v1/stats")
    assert statuses == [200, 200, 200, 429]
    assert limited.json()["error"] == "rate limit exceeded"
    assert int(limited.headers["retry-after"]) == limited.json()["retry_after_seconds"] >= 1
    assert alias.status_code == 200


async def test_an_unknown_key_is_401_not_anonymous(client: httpx.AsyncClient) -> None:
    for headers, params in [({"X-API-Key": "not-a-key"}, {}), ({}, {"api_key": "not-a-key"})]:
        response = await client.get("/api/v2/stats", headers=headers, params=params)
        assert response.status_code == 401
        assert set(response.json()) == {"error"}
        assert response.headers["x-ratelimit-limit"] == "60"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    segment=st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/?#"), min_size=1, max_size=60),
    query=st.text(max_size=40),
)
async def test_any_id_or_query_answers_json_and_never_500(client: httpx.AsyncClient, segment: str, query: str) -> None:
    from urllib.parse import quote

    for path in (f"/api/v1/puzzles/{quote(segment)}", f"/api/v1/puzzles/{quote(segment)}/solution"):
        response = await client.get(path, params={"difficulty": query, "variant": query})
        assert response.status_code in (200, 400, 404)
        if response.status_code != 200:
            assert set(response.json()) == {"error"}


_QUERY_TEXT = st.text(alphabet="ab=&%+;2F0é x", max_size=30)


@given(raw=_QUERY_TEXT, name=st.sampled_from(["a", "ab", "b a", "é"]))
def test_query_reads_parameters_as_parse_qsl_does(raw: str, name: str) -> None:
    encoded = raw.encode("utf-8")
    scope = {"query_string": encoded}
    expected = next((v for k, v in parse_qsl(encoded.decode("latin-1"), keep_blank_values=True) if k == name), None)
    if name.encode() not in encoded:  # the fast path gives up early; parse_qsl may still decode it
        assert query(scope, name) is None
    else:
        assert query(scope, name) == expected
