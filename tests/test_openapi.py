from __future__ import annotations

from typing import Any, cast

import httpx
import pytest
from openapi_core import OpenAPI
from openapi_spec_validator import validate

from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.openapi import document
from sudokupool.pool import Pool
from sudokupool.storage.base import StorageError

pytestmark = pytest.mark.anyio


def test_the_document_is_valid_openapi_3_0_3() -> None:
    doc = document()
    validate(doc)
    assert doc["openapi"] == "3.0.3"
    assert doc["info"]["version"] == "2.0.0"
    assert doc["security"] == [{}, {"ApiKeyHeader": []}, {"ApiKeyQuery": []}]


def test_every_limited_operation_documents_401_429_and_the_rate_headers() -> None:
    doc = document()
    for path, item in doc["paths"].items():
        responses = item["get"]["responses"]
        if path.endswith("openapi.json"):
            assert "429" not in responses
            continue
        assert {"200", "401", "429", "500"} <= set(responses), path
        assert set(responses["200"]["headers"]) >= {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}


async def test_the_document_is_served(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/openapi.json")
    assert response.status_code == 200
    assert response.json() == document()


def _live_cases(records: list[dict[str, Any]]) -> list[str]:
    code = records[0]["canonical_id"]
    return [
        "/api/v2/health",
        "/api/v2/stats",
        "/api/v2/stats/activity",
        "/api/v2/puzzles/random",
        "/api/v2/puzzles/random?difficulty=easy",
        "/api/v2/puzzles/random?difficulty=nope",
        f"/api/v2/puzzles/{code}",
        f"/api/v2/puzzles/{code}/solution",
        "/api/v2/puzzles/UNKNOWN000000",
        "/api/v2/puzzles/UNKNOWN000000/solution",
        "/api/v2/pool-exports",
    ]


async def test_live_responses_match_the_document(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    spec = OpenAPI.from_dict(document())
    for url in _live_cases(records):
        response = await client.get(url)
        request = httpx.Request("GET", f"http://testserver{url}")
        spec.validate_response(_Request(request), _Response(response))


class _Request:
    """An openapi-core request made from an httpx request."""

    def __init__(self, request: httpx.Request) -> None:
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        self.host_url = f"{request.url.scheme}://{request.url.netloc.decode()}"
        self.path = request.url.path
        self.full_url_pattern = f"{self.host_url}{self.path}"
        self.method = request.method.lower()
        self.body = b""
        self.content_type = "application/json"
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(list(request.url.params.multi_items())),
            header=Headers(list(request.headers.items())),
            cookie=ImmutableMultiDict(),
        )


class _Response:
    def __init__(self, response: httpx.Response) -> None:
        from werkzeug.datastructures import Headers

        self.data = response.content
        self.status_code = response.status_code
        self.content_type = response.headers.get("content-type", "")
        self.headers = Headers(list(response.headers.items()))


class _UnreachableStore:
    description = "s3://nobody/exports/"

    async def list_exports(self, limit: int) -> Any:
        raise StorageError(f"{self.description}: Connection refused")


async def test_the_listing_503_matches_the_document(pool: Pool) -> None:
    app = create_app(Settings(), pool=pool)
    app.runtime.store = cast(Any, _UnreachableStore())
    spec = OpenAPI.from_dict(document())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        for _ in range(2):
            response = await client.get("/api/v2/pool-exports")
            assert response.status_code == 503
            assert response.json() == {"error": "storage is unreachable; the export listing is unavailable right now"}
            assert response.headers["retry-after"] == "5"
            request = httpx.Request("GET", "http://testserver/api/v2/pool-exports")
            spec.validate_response(_Request(request), _Response(response))
