from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import httpx
import orjson
import pytest
from openapi_core import OpenAPI
from openapi_spec_validator import validate

from sudokupool.api.dispatch import ApiRouter
from sudokupool.api.front import Front
from sudokupool.api.openapi import METHODS_NOTE
from sudokupool.api.routes import ROUTES, UNLIMITED_PATHS, document
from sudokupool.api.schemas import PUZZLE_ID_DESCRIPTION
from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from sudokupool.storage.base import StorageError
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from tests.helpers import free_port

pytestmark = pytest.mark.anyio


def test_the_document_is_valid_openapi_3_0_3() -> None:
    doc = document()
    validate(doc)
    assert doc["openapi"] == "3.0.3"
    assert doc["info"]["version"] == "2.0.0"
    assert doc["security"] == [{}, {"ApiKeyHeader": []}, {"ApiKeyQuery": []}]


def test_the_served_paths_are_the_documented_paths(pool: Pool) -> None:
    app = create_app(Settings(), pool=pool)
    v2 = cast(ApiRouter, cast(Front, app.http).v2)
    served, documented = set(v2.paths), set(document()["paths"])
    assert served - documented == set(), "served at /api/v2 but not in the OpenAPI document"
    assert documented - served == set(), "in the OpenAPI document but not served at /api/v2"


def test_the_unversioned_and_v1_routers_serve_the_table(pool: Pool) -> None:
    front = cast(Front, create_app(Settings(), pool=pool).http)
    assert cast(ApiRouter, front.v1).paths == tuple("/api/v1" + route.path for route in ROUTES)
    unversioned = tuple("/api" + route.path for route in ROUTES if route.unversioned)
    assert cast(ApiRouter, front.unversioned).paths == unversioned
    assert unversioned and all(path.startswith(("/api/puzzles", "/api/grids/")) for path in unversioned)


def test_the_limiter_lets_through_exactly_the_operations_documented_without_429(pool: Pool) -> None:
    limiter = cast(ApiRouter, cast(Front, create_app(Settings(), pool=pool).http).v2).limiter
    assert limiter is not None
    unlimited = {path for path, item in document()["paths"].items() if "429" not in item["get"]["responses"]}
    assert limiter.exempt_paths == UNLIMITED_PATHS == unlimited == {"/api/v2/openapi.json"}


def test_the_api_docs_say_what_the_document_says_of_puzzle_id() -> None:
    schema = document()["components"]["schemas"]["PuzzlePublicRecord"]["properties"]["puzzle_id"]
    assert schema["description"] == PUZZLE_ID_DESCRIPTION
    docs = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    assert " ".join(PUZZLE_ID_DESCRIPTION.split()) in " ".join(docs.split())


async def test_puzzle_id_is_the_exact_grids_code_and_paths_take_canonical_id(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    """What the description of puzzle_id says, checked against the service."""
    record = (await client.get(f"/api/v2/puzzles/{records[0]['canonical_id']}")).json()
    by_puzzle_id = await client.get(f"/api/v2/puzzles/{record['puzzle_id']}")
    assert record["puzzle_id"] == puzzle_id(record["puzzle"])
    assert record["canonical_id"] == canonical_id(canonical_form(record["puzzle"]))
    assert by_puzzle_id.status_code == 404
    assert by_puzzle_id.json() == {"error": "no puzzle has that id"}
    # Transposed and with two digits swapped: another grid, the same puzzle.
    grid = record["puzzle"]
    other = "".join(grid[column * 9 + row] for row in range(9) for column in range(9))
    other = other.translate(str.maketrans("12", "21"))
    assert puzzle_id(other) != record["puzzle_id"]
    assert canonical_id(canonical_form(other)) == record["canonical_id"]


def test_every_limited_operation_documents_401_429_and_the_rate_headers() -> None:
    doc = document()
    for path, item in doc["paths"].items():
        responses = item["get"]["responses"]
        if path.endswith("openapi.json"):
            assert "429" not in responses
            continue
        # A redirect's success is its 302.
        ok = "302" if path.endswith(("/random/image", "/daily/image")) else "200"
        assert {ok, "401", "429", "500"} <= set(responses), path
        assert set(responses[ok]["headers"]) >= {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}


def _operations() -> list[tuple[str, dict[str, Any]]]:
    return [(path, item["get"]) for path, item in document()["paths"].items()]


def _schemas_in(node: Any, where: str = "#") -> list[tuple[str, dict[str, Any]]]:
    """Every schema object below ``node`` that is not a $ref, with where it is."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        if "type" in node and "$ref" not in node and isinstance(node["type"], str):
            found.append((where, node))
        for key, value in node.items():
            found += _schemas_in(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _schemas_in(value, f"{where}/{index}")
    return found


def test_every_object_has_typed_properties_and_every_item_is_named() -> None:
    doc = document()
    for where, schema in _schemas_in(doc):
        if schema["type"] == "object" and "OpenApiDocument" not in where:
            # A bare `type: object` becomes Record<string, never> in TypeScript and an untyped dict in Python.
            assert schema.get("properties"), where
        if schema["type"] == "array":
            item = schema["items"]
            assert "$ref" in item or item["type"] in ("string", "integer"), where
    # The inline objects of the schemas are named components too.
    for name, schema in doc["components"]["schemas"].items():
        for prop, value in schema.get("properties", {}).items():
            assert value.get("type") != "object" or name == "OpenApiDocument", f"{name}.{prop}"
    document_schema = doc["components"]["schemas"]["OpenApiDocument"]
    assert {"openapi", "info", "paths"} <= set(document_schema["required"])


def test_tags_group_every_operation_by_resource() -> None:
    doc = document()
    defined = {tag["name"] for tag in doc["tags"]}
    used = {tag for _, op in _operations() for tag in op["tags"]}
    assert used == defined == {"puzzles", "grids", "stats", "exports", "service"}
    assert all(tag.get("description") for tag in doc["tags"])


def test_cacheable_operations_take_if_none_match_and_document_304() -> None:
    doc = document()
    header = doc["components"]["parameters"]["IfNoneMatch"]
    assert (header["in"], header["name"]) == ("header", "If-None-Match")
    cacheable = {path for path, op in _operations() if "304" in op["responses"]}
    assert cacheable == {
        "/api/v2/puzzles/{id}",
        "/api/v2/puzzles/{id}/solution",
        "/api/v2/puzzles/{id}/image",
        "/api/v2/puzzles/{id}/hint",
        "/api/v2/puzzles/daily",
        "/api/v2/puzzles/daily/archive",
        "/api/v2/techniques",
        "/api/v2/grids/{grid}",
        "/api/v2/grids/{grid}/hint",
    }
    for path, op in _operations():
        refs = {p.get("$ref") for p in op.get("parameters", [])}
        assert ("#/components/parameters/IfNoneMatch" in refs) == (path in cacheable), path
        if path in cacheable:
            assert set(op["responses"]["200"]["headers"]) >= {"ETag", "Cache-Control"}


def test_the_image_is_binary_in_a_type_openapi_python_client_reads() -> None:
    (op,) = [op for path, op in _operations() if path.endswith("{id}/image")]
    content = op["responses"]["200"]["content"]
    binary = {"schema": {"type": "string", "format": "binary"}}
    # openapi-python-client reads application/json, application/octet-stream and text/* without a config file.
    assert content == {
        "image/png": binary,
        "image/svg+xml": binary,
        "image/webp": binary,
        "application/octet-stream": binary,
    }


def test_the_image_documents_its_formats_and_sizes() -> None:
    (op,) = [op for path, op in _operations() if path.endswith("{id}/image")]
    params = {p["name"]: p for p in op["parameters"] if "name" in p}
    assert params["format"]["schema"] == {"type": "string", "enum": ["png", "svg", "webp"], "default": "png"}
    assert params["size"]["schema"] == {"type": "integer", "minimum": 100, "maximum": 2000, "default": 480}
    assert params["variant"]["schema"]["enum"] == ["puzzle", "solution"]
    assert "400" in op["responses"]


def test_the_difficulty_filter_takes_a_records_difficulty_and_lower_case() -> None:
    doc = document()
    (op,) = [op for path, op in _operations() if path.endswith("/random")]
    param, *filters = op["parameters"]
    names = ["technique", "stars", "min_score", "max_score", "min_clues", "max_clues", "symmetry", "seed"]
    assert [f["name"] for f in filters] == names
    refs = [branch["$ref"].rsplit("/", 1)[1] for branch in param["schema"]["anyOf"]]
    assert refs == ["Difficulty", "DifficultyFilter"]
    schemas = doc["components"]["schemas"]
    assert schemas["PuzzlePublicRecord"]["properties"]["difficulty"] == {"$ref": "#/components/schemas/Difficulty"}
    assert schemas["Difficulty"]["enum"] == list(DIFFICULTIES)
    assert schemas["DifficultyFilter"]["enum"] == [name.lower() for name in DIFFICULTIES]


def test_other_methods_head_and_503_are_documented_where_they_happen() -> None:
    doc = document()
    assert "405" in METHODS_NOTE and "Allow: GET, HEAD" in METHODS_NOTE and "HEAD" in doc["info"]["description"]
    for path, item in doc["paths"].items():
        assert item["description"] == METHODS_NOTE, path
        responses = item["get"]["responses"]
        if path.endswith("openapi.json"):
            assert "503" not in responses
        elif path.endswith(("pool-exports", "pool-exports/{key}")):
            assert responses["503"] == {"$ref": "#/components/responses/ExportsUnavailable"}
        elif path.endswith("/image") and not path.endswith(("/random/image", "/daily/image")):
            # (The random and daily image paths redirect to a puzzle's image: the limiter's 503 only.)
            # An uncached picture waits for the work pool: full queue or past its budget (and the limiter's).
            assert responses["503"] == {"$ref": "#/components/responses/WorkUnavailable"}
        elif path.endswith("/hint") or path.startswith("/api/v2/grids/"):
            # A live grade or a hint waits for the work pool, as a picture does.
            assert responses["503"] == {"$ref": "#/components/responses/EngineUnavailable"}
        else:
            assert responses["503"] == {"$ref": "#/components/responses/LimiterUnavailable"}, path


def test_info_has_license_and_contact() -> None:
    info = document()["info"]
    assert info["license"] == {"name": "MIT", "url": "https://opensource.org/licenses/MIT"}
    assert info["contact"]["name"]


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
        f"/api/v2/puzzles/random?difficulty={records[0]['difficulty']}",
        "/api/v2/puzzles/random?difficulty=nope",
        f"/api/v2/puzzles/{code}",
        f"/api/v2/puzzles/{code}/solution",
        "/api/v2/puzzles/UNKNOWN000000",
        "/api/v2/puzzles/UNKNOWN000000/solution",
        "/api/v2/pool-exports",
        f"/api/v2/puzzles/random?technique={records[0]['techniques'][-1]}&stars={records[0]['stars']}",
        f"/api/v2/puzzles/random?min_score={records[0]['score']}&max_score={records[0]['score']}&difficulty=expert",
        "/api/v2/puzzles/random?stars=7",
        "/api/v2/puzzles/random?min_score=99999999",
        "/api/v2/puzzles/daily",
        "/api/v2/puzzles/daily?difficulty=hard",
        "/api/v2/puzzles/daily?date=2026-02-30",
        "/api/v2/puzzles/daily?date=2999-01-01",
        "/api/v2/techniques",
    ]


async def test_live_responses_match_the_document(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    spec = OpenAPI.from_dict(document())
    for url in _live_cases(records):
        response = await client.get(url)
        request = httpx.Request("GET", f"http://testserver{url}")
        spec.validate_response(_Request(request), _Response(response))


class _UnreachableStore:
    """An export store whose listing fails as an unreachable bucket does."""

    async def list_exports(self, limit: int) -> Any:
        raise StorageError("cannot list exports in s3://bucket/: connection refused")


async def test_the_503s_match_the_document(pool: Pool) -> None:
    spec = OpenAPI.from_dict(document())
    # Storage down and nothing cached: pool-exports answers 503.
    app = create_app(Settings(), pool=pool)
    app.runtime.store = _UnreachableStore()
    # The shared limiter's Redis refuses connections and the service is set to refuse meanwhile.
    closed = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_timeout=0.5, redis_failure_mode="closed")
    cases = [(app, "/api/v2/pool-exports"), (create_app(closed, pool=pool), "/api/v2/health")]
    # A picture that takes longer than the work pool's budget.
    hasty = create_app(Settings(work_budget_seconds=0.001), pool=pool)
    code = orjson.loads(pool.body(0))["canonical_id"]
    cases.append((hasty, f"/api/v2/puzzles/{code}/image?size=2000&format=webp"))
    for asgi, url in cases:
        transport = httpx.ASGITransport(app=asgi, client=("203.0.113.7", 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            response = await client.get(url)
        await asgi.runtime.work.aclose()
        assert response.status_code == 503, url
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


async def test_the_listing_503_is_remembered_and_says_when_to_retry(pool: Pool) -> None:
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
