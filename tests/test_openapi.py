from __future__ import annotations

from typing import Any

import httpx
import pytest
from openapi_core import OpenAPI
from openapi_spec_validator import validate

from sudokupool.openapi import document

pytestmark = pytest.mark.anyio


def test_the_document_is_valid_openapi_3_0_3() -> None:
    doc = document()
    validate(doc)
    assert doc["openapi"] == "3.0.3"
    assert doc["info"]["version"] == "2.1.0"
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
