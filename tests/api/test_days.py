"""The puzzle of the day in a time zone (``tz``), at both sides of midnight, and where the system has no zones."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest

from sudokupool.api.days import today, zone
from tests.servers import run_server

pytestmark = pytest.mark.anyio

Clients = Callable[[float], httpx.AsyncClient]


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("tz", "before", "after", "date_before", "date_after"),
    [
        # New York in November is UTC-5: its 20th begins at 05:00 UTC.
        pytest.param(
            "America/New_York", "2026-11-20T04:59:59", "2026-11-20T05:00:01", "2026-11-19", "2026-11-20", id="ny"
        ),
        # Kolkata is UTC+5:30: its 21st begins at 18:30 UTC on the 20th.
        pytest.param(
            "Asia/Kolkata", "2026-11-20T18:29:59", "2026-11-20T18:30:01", "2026-11-20", "2026-11-21", id="kol"
        ),
    ],
)
async def test_today_is_the_zones_date_at_both_sides_of_its_midnight(
    client_at: Clients, tz: str, before: str, after: str, date_before: str, date_after: str
) -> None:
    for now, day, max_age in ((at(before), date_before, 1), (at(after), date_after, 86_399)):
        client = client_at(now)
        zoned = await client.get("/api/v2/puzzles/daily", params={"tz": tz})
        dated = await client.get("/api/v2/puzzles/daily", params={"date": day})
        assert zoned.status_code == 200
        assert zoned.json()["canonical_id"] == dated.json()["canonical_id"], (tz, now)
        assert zoned.headers["cache-control"] == f"public, max-age={max_age}"
        image = await client.get("/api/v2/puzzles/daily/image", params={"tz": tz})
        assert image.headers["location"] == f"/api/v2/puzzles/{zoned.json()['canonical_id']}/image"
        assert image.headers["cache-control"] == f"public, max-age={max_age}"
    # Across the zone's midnight the puzzle changes.
    days = {
        (await client_at(at(t)).get("/api/v2/puzzles/daily", params={"tz": tz})).json()["canonical_id"]
        for t in (before, after)
    }
    assert len(days) == 2


async def test_a_date_is_the_same_puzzle_in_every_zone(client_at: Clients) -> None:
    client = client_at(at("2026-11-20T12:00:00"))
    answers = {
        (await client.get("/api/v2/puzzles/daily", params={"date": "2026-11-18", "tz": tz})).json()["canonical_id"]
        for tz in ("UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Paris")
    }

    assert len(answers) == 1


@pytest.mark.parametrize(
    "tz",
    [
        pytest.param("", id="empty"),
        pytest.param("Mars/Olympus_Mons", id="unknown"),
        pytest.param("../../../etc/passwd", id="dots"),
        pytest.param("/etc/localtime", id="absolute"),
        pytest.param("Europe/Paris ", id="space"),
        pytest.param("x" * 300, id="long"),
    ],
)
async def test_bad_zones_are_a_400(client: httpx.AsyncClient, tz: str) -> None:
    response = await client.get("/api/v2/puzzles/daily", params={"tz": tz})

    assert response.status_code == 400
    assert response.json() == {"error": "tz must be an IANA time zone name such as Europe/Paris or America/New_York"}


def test_today_ends_at_the_zones_midnight_across_a_clock_change() -> None:
    # Paris leaves summer time on 2026-10-25: that day lasts 25 hours.
    start = datetime(2026, 10, 25, 0, 30, tzinfo=ZoneInfo("Europe/Paris")).timestamp()
    current = today(start, zone("Europe/Paris"))

    assert current.ends_at - start == 25 * 3600 - 1800


@pytest.mark.slow
def test_the_real_service_knows_zones_without_a_system_database(export_dir: Path, tmp_path: Path) -> None:
    # No zone files where zoneinfo looks first: it falls back to the tzdata package.
    empty = tmp_path / "no-zones"
    empty.mkdir()
    env = {"SUDOKUPOOL_EXPORTS": str(export_dir), "PYTHONTZPATH": str(empty)}
    with run_server(env, tmp_path / "server.log") as server:
        seen = {}
        for tz in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):
            # Kiritimati (UTC+14) and Pago Pago (UTC-11) are never on the same date.
            local = datetime.now(ZoneInfo(tz)).date().isoformat()
            zoned = httpx.get(f"{server.url}/api/v2/puzzles/daily", params={"tz": tz})
            if datetime.now(ZoneInfo(tz)).date().isoformat() != local:
                continue  # the zone's midnight passed between the two looks
            dated = httpx.get(f"{server.url}/api/v2/puzzles/daily", params={"date": local})
            assert zoned.status_code == 200, zoned.text
            assert zoned.json()["canonical_id"] == dated.json()["canonical_id"]
            seen[tz] = local
        assert len(set(seen.values())) == len(seen) >= 1
        assert httpx.get(f"{server.url}/api/v2/puzzles/daily", params={"tz": "Nowhere/Else"}).status_code == 400
