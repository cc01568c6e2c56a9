"""The web page's routes: the page at ``/`` and ``/p/{code}``, its static files and their caching."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from sudokupool.web.site import STATIC_DIR, asset_version

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/", id="root"),
        pytest.param("/p/HTZYPM3WFE49J", id="share-link"),
        pytest.param("/p/not-a-code", id="unknown-code"),
        pytest.param("/?id=HTZYPM3WFE49J", id="query"),
    ],
)
async def test_page_paths_serve_the_page(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert '<div id="grid"' in response.text
    version = asset_version(STATIC_DIR)
    assert f'src="/static/app.js?v={version}"' in response.text
    assert f'href="/static/style.css?v={version}"' in response.text
    assert "?v=dev" not in response.text


async def test_page_answers_304_to_its_etag(client: httpx.AsyncClient) -> None:
    first = await client.get("/")
    again = await client.get("/p/ANYTHING", headers={"if-none-match": first.headers["etag"]})

    assert again.status_code == 304
    assert again.headers["etag"] == first.headers["etag"]
    assert again.content == b""


@pytest.mark.parametrize(
    ("path", "cache_control", "media_type"),
    [
        pytest.param("/static/app.js?v=abc", "public, max-age=31536000, immutable", "text/javascript", id="versioned"),
        pytest.param("/static/sudoku.js", "no-cache", "text/javascript", id="module-unversioned"),
        pytest.param("/static/style.css", "no-cache", "text/css", id="css"),
        pytest.param("/static/icon.svg?v=1", "public, max-age=31536000, immutable", "image/svg+xml", id="icon"),
    ],
)
async def test_static_files_carry_cache_headers(
    client: httpx.AsyncClient, path: str, cache_control: str, media_type: str
) -> None:
    response = await client.get(path)

    assert response.status_code == 200
    assert response.headers["cache-control"] == cache_control
    assert response.headers["content-type"].startswith(media_type)
    assert "etag" in response.headers


async def test_static_file_revalidates_with_304(client: httpx.AsyncClient) -> None:
    first = await client.get("/static/app.js")
    again = await client.get("/static/app.js", headers={"if-none-match": first.headers["etag"]})

    assert again.status_code == 304
    assert again.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/static/missing.js", id="missing-static"),
        pytest.param("/static/../app.py", id="outside-static"),
        pytest.param("/p/", id="empty-code"),
        pytest.param("/p/A/B", id="nested"),
        pytest.param("/elsewhere", id="unknown"),
    ],
)
async def test_other_paths_keep_the_json_404(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": "not found"}


@pytest.mark.parametrize(
    ("range_", "status", "error"),
    [
        pytest.param("bytes=999999-", 416, "requested range not satisfiable", id="past-the-end"),
        pytest.param("bytes=abc", 400, "Range header: range must be requested", id="malformed"),
        pytest.param("bytes=5-1", 400, "Range header: start must be less than end", id="backwards"),
        pytest.param("lines=0-1", 400, "Only support bytes range", id="other-unit"),
    ],
)
async def test_a_static_file_range_error_is_json(
    client: httpx.AsyncClient, range_: str, status: int, error: str
) -> None:
    response = await client.get("/static/app.js", headers={"Range": range_})

    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-length"] == str(len(response.content))
    assert response.json() == {"error": error}
    if status == 416:
        size = len((await client.get("/static/app.js")).content)
        assert response.headers["content-range"] == f"bytes */{size}"


async def test_a_satisfiable_range_still_gets_the_bytes(client: httpx.AsyncClient) -> None:
    whole = (await client.get("/static/app.js")).content
    response = await client.get("/static/app.js", headers={"Range": "bytes=0-9"})

    assert response.status_code == 206
    assert response.content == whole[:10]


@pytest.mark.parametrize(
    ("method", "status", "error"),
    [
        pytest.param("POST", 405, "method not allowed", id="post-page"),
        pytest.param("DELETE", 405, "method not allowed", id="delete-page"),
        pytest.param("OPTIONS", 405, "method not allowed", id="options-page"),
    ],
)
async def test_other_methods_on_the_site_are_json(
    client: httpx.AsyncClient, method: str, status: int, error: str
) -> None:
    response = await client.request(method, "/")

    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": error}


async def test_api_paths_are_not_shadowed_by_the_page(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/puzzles/random")

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert re.fullmatch(r"[0-9A-Z]{13}", response.json()["canonical_id"])


def test_asset_version_changes_with_any_file(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text("one")
    before = asset_version(tmp_path)
    (tmp_path / "app.js").write_text("two")

    assert asset_version(tmp_path) != before
    assert re.fullmatch(r"[0-9a-f]{12}", before)


def test_every_page_asset_exists() -> None:
    html = (STATIC_DIR / "index.html").read_text()
    assets = set(re.findall(r'"/static/([^"?]+)\?v=dev"', html))

    assert assets == {"app.js", "style.css", "icon.svg"}
    assert all((STATIC_DIR / name).is_file() for name in assets)


async def test_the_embedded_player_may_be_framed_by_any_origin(client: httpx.AsyncClient) -> None:
    response = await client.get("/embed/HTZYPM3WFE49J")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    policy = response.headers["content-security-policy"]
    assert "frame-ancestors *" in policy and "'none'" not in policy.split("frame-ancestors")[1].split(";")[0]
    assert "default-src 'self'" in policy
    assert "x-frame-options" not in response.headers
    version = asset_version(STATIC_DIR)
    assert f'src="/static/embed.js?v={version}"' in response.text
    assert '<div id="grid"' in response.text
    # The full page keeps refusing every frame.
    assert "frame-ancestors 'none'" in (await client.get("/")).headers["content-security-policy"]


async def test_the_embedded_player_answers_304_to_its_etag(client: httpx.AsyncClient) -> None:
    first = await client.get("/embed/A")
    again = await client.get("/embed/B", headers={"if-none-match": first.headers["etag"]})
    assert again.status_code == 304
    assert "frame-ancestors *" in again.headers["content-security-policy"]
