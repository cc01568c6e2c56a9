"""``/puzzles/random/image`` and ``/puzzles/daily/image``: one URL for a picture, on the real service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers import run_server

pytestmark = pytest.mark.anyio


async def test_random_image_redirects_to_a_matching_puzzles_image(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    by_id = {r["canonical_id"]: r for r in records}
    response = await client.get("/api/v2/puzzles/random/image?difficulty=easy&format=SVG&size=300&variant=puzzle")

    assert response.status_code == 302
    assert response.headers["cache-control"] == "no-store"
    location = response.headers["location"]
    assert location.startswith("/api/v2/puzzles/") and location.endswith("/image?format=svg&size=300")
    assert by_id[location.split("/")[4]]["difficulty"] == "Easy"


async def test_redirects_stay_on_the_surface_asked(client: httpx.AsyncClient) -> None:
    for prefix in ("/api/v1", "/api"):
        response = await client.get(f"{prefix}/puzzles/daily/image")
        assert response.status_code == 302
        assert response.headers["location"].startswith(f"{prefix}/puzzles/")
        assert response.headers["location"].endswith("/image")


async def test_a_seeded_random_image_is_the_seeds_first(client: httpx.AsyncClient) -> None:
    first = (await client.get("/api/v2/puzzles?count=1&seed=9")).json()["puzzles"][0]["canonical_id"]
    response = await client.get("/api/v2/puzzles/random/image?seed=9&variant=solution")

    assert response.headers["location"] == f"/api/v2/puzzles/{first}/image?variant=solution"


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("format=gif", id="format"),
        pytest.param("size=99", id="size"),
        pytest.param("variant=", id="variant"),
        pytest.param("tz=Mars/Olympus", id="tz"),
        pytest.param("date=2026-02-30", id="date"),
    ],
)
async def test_bad_image_parameters_are_a_400(client: httpx.AsyncClient, query: str) -> None:
    response = await client.get(f"/api/v2/puzzles/daily/image?{query}")

    assert response.status_code == 400


@pytest.mark.slow
def test_the_redirects_land_on_real_images_of_the_right_type(export_dir: Path, tmp_path: Path) -> None:
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir)}, tmp_path / "server.log") as server:
        cases = [
            ("/api/v2/puzzles/random/image", "image/png", b"\x89PNG"),
            ("/api/v2/puzzles/random/image?format=webp&size=200", "image/webp", b"RIFF"),
            ("/api/v2/puzzles/daily/image?format=svg", "image/svg+xml", b"<svg"),
            ("/api/v2/puzzles/daily/image?tz=Asia/Tokyo&variant=solution", "image/png", b"\x89PNG"),
        ]
        for path, kind, magic in cases:
            # The first render starts the work process, which runs at a low priority: slow on a loaded machine.
            response = httpx.get(server.url + path, follow_redirects=True, timeout=60)
            assert response.status_code == 200, path
            assert [r.status_code for r in response.history] == [302], path
            assert response.headers["content-type"] == kind
            assert response.content.startswith(magic), path
        daily = httpx.get(f"{server.url}/api/v2/puzzles/daily/image")
        record = httpx.get(f"{server.url}/api/v2/puzzles/daily").json()
        assert daily.headers["location"] == f"/api/v2/puzzles/{record['canonical_id']}/image"
        max_age = int(daily.headers["cache-control"].removeprefix("public, max-age="))
        assert 0 < max_age <= 86_400
