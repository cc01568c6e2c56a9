"""``/puzzles/daily/archive``: the puzzles of past days, as the daily gives them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.pool import Pool
from tests.servers import run_server

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 11, 20, 15, tzinfo=UTC).timestamp()


@pytest.fixture
async def at_noon(pool: Pool) -> httpx.AsyncClient:
    app = create_app(Settings(), pool=pool, clock=lambda: NOW)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def test_each_day_is_the_dailys_puzzle_newest_first(at_noon: httpx.AsyncClient) -> None:
    for difficulty in (None, "hard"):
        query = {"from": "2026-11-10", "to": "2026-11-20", **({"difficulty": difficulty} if difficulty else {})}
        response = await at_noon.get("/api/v2/puzzles/daily/archive", params=query)
        assert response.status_code == 200
        body = response.json()
        assert (body["from"], body["to"]) == ("2026-11-10", "2026-11-20")
        assert [d["date"] for d in body["days"]] == [
            (date(2026, 11, 20) - timedelta(days=k)).isoformat() for k in range(11)
        ]
        for day in body["days"]:
            one = {"date": day["date"], **({"difficulty": difficulty} if difficulty else {})}
            record = (await at_noon.get("/api/v1/puzzles/daily", params=one)).json()
            assert day == {
                "date": day["date"],
                "canonical_id": record["canonical_id"],
                "difficulty": record["difficulty"],
                "stars": record["stars"],
            }


async def test_the_default_is_the_last_31_days_cacheable_until_today_ends(at_noon: httpx.AsyncClient) -> None:
    response = await at_noon.get("/api/v2/puzzles/daily/archive")

    body = response.json()
    assert (body["from"], body["to"], len(body["days"])) == ("2026-10-21", "2026-11-20", 31)
    assert response.headers["cache-control"] == f"public, max-age={9 * 3600}"
    again = await at_noon.get("/api/v2/puzzles/daily/archive", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304
    past = await at_noon.get("/api/v2/puzzles/daily/archive", params={"to": "2026-11-01"})
    assert past.headers["cache-control"] == "public, max-age=86400"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param({"from": "2026-10-01", "to": "2026-11-20"}, "the archive lists at most 31 days", id="too-long"),
        pytest.param({"to": "2026-11-21"}, "to must be today (2026-11-20, UTC) or earlier", id="future"),
        pytest.param({"from": "2026-11-12", "to": "2026-11-11"}, "from must not be after to", id="crossed"),
        pytest.param({"from": ""}, "from must be a calendar date as YYYY-MM-DD", id="empty-from"),
        pytest.param({"to": "2026-02-30"}, "to must be a calendar date as YYYY-MM-DD", id="no-such-date"),
        pytest.param({"difficulty": "x"}, "difficulty must be one of", id="difficulty"),
    ],
)
async def test_bad_spans_are_a_400(at_noon: httpx.AsyncClient, query: dict[str, str], message: str) -> None:
    response = await at_noon.get("/api/v2/puzzles/daily/archive", params=query)

    assert response.status_code == 400
    assert response.json()["error"].startswith(message)


@pytest.mark.slow
def test_the_archive_on_the_real_service(export_dir: Path, tmp_path: Path) -> None:
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir)}, tmp_path / "server.log") as server:
        body = httpx.get(f"{server.url}/api/v2/puzzles/daily/archive", params={"difficulty": "easy"}).json()
        today = datetime.now(UTC).date()
        assert body["to"] == today.isoformat() and len(body["days"]) == 31
        first = body["days"][-1]
        daily = httpx.get(f"{server.url}/api/v2/puzzles/daily", params={"date": first["date"], "difficulty": "easy"})
        assert daily.json()["canonical_id"] == first["canonical_id"] and first["difficulty"] == "Easy"
