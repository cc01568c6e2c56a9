"""Every operation through the client openapi-python-client generated from the live document.

Run in the generators' throwaway venv by tests/api/test_openapi_clients.py (argv: base URL, issued API
key) and type-checked there with ``mypy --strict``: it must need no cast. It prints what it saw as
JSON; the test asserts on that.
"""

from __future__ import annotations

import datetime
import json
import sys
from typing import Any

from sudokupool_sudoku_puzzle_pool_api_client import AuthenticatedClient, Client
from sudokupool_sudoku_puzzle_pool_api_client.api.exports import download_pool_export, pool_exports
from sudokupool_sudoku_puzzle_pool_api_client.api.grids import get_grid, get_grid_hint
from sudokupool_sudoku_puzzle_pool_api_client.api.puzzles import (
    daily_archive,
    daily_puzzle,
    daily_puzzle_image,
    get_puzzle,
    get_puzzle_hint,
    get_puzzle_image,
    get_solution,
    list_puzzles,
    list_techniques,
    random_puzzle,
    random_puzzle_image,
)
from sudokupool_sudoku_puzzle_pool_api_client.api.service import health, openapi
from sudokupool_sudoku_puzzle_pool_api_client.api.stats import activity, stats
from sudokupool_sudoku_puzzle_pool_api_client.models import (
    ActivityStats,
    DailyArchive,
    DifficultyFilter,
    Error,
    GetPuzzleImageFormat,
    GetPuzzleImageVariant,
    GlobalStats,
    GridAnswer,
    GridError,
    Health,
    Hint,
    OpenApiDocument,
    PoolExportsResponse,
    PuzzlePublicRecord,
    PuzzleSet,
    RateLimitError,
    SolutionResponse,
    TechniqueCatalogue,
)
from sudokupool_sudoku_puzzle_pool_api_client.types import File


def main(base_url: str, key: str) -> dict[str, Any]:
    # Strict: an undocumented status raises instead of answering None.
    client = AuthenticatedClient(
        base_url=base_url, token=key, prefix="", auth_header_name="X-API-Key", raise_on_unexpected_status=True
    )
    seen: dict[str, Any] = {}

    h = health.sync(client=client)
    assert isinstance(h, Health)
    seen["health"] = {"ok": h.ok, "export_key": h.export.key, "fallback": h.export.fallback}

    s = stats.sync(client=client)
    assert isinstance(s, GlobalStats)
    seen["stats"] = {"total": s.total, "by_difficulty": s.by_difficulty.to_dict()}

    record = random_puzzle.sync(client=client)
    assert isinstance(record, PuzzlePublicRecord)
    # The record's own difficulty goes back as the filter, as it is.
    same = random_puzzle.sync(client=client, difficulty=record.difficulty)
    assert isinstance(same, PuzzlePublicRecord)
    lower = random_puzzle.sync(client=client, difficulty=DifficultyFilter(record.difficulty.value.lower()))
    assert isinstance(lower, PuzzlePublicRecord)
    seen["random"] = {
        "difficulty": record.difficulty.value,
        "same": same.difficulty.value,
        "lower": lower.difficulty.value,
        "used_at": record.used_at,
        "steps": len(record.solve_path or []),
    }

    catalogue = list_techniques.sync_detailed(client=client)
    assert isinstance(catalogue.parsed, TechniqueCatalogue)
    used = [item for item in catalogue.parsed.techniques if item.puzzles > 0]
    # The rarest technique the pool has, with the stars and score range of a puzzle that uses it.
    rare = min(used, key=lambda item: item.puzzles)
    practice = random_puzzle.sync(client=client, technique=rare.name)
    assert isinstance(practice, PuzzlePublicRecord)
    score = practice.score
    assert isinstance(score, (int, float)) and practice.stars is not None
    narrow = random_puzzle.sync(
        client=client, technique=rare.name, stars=practice.stars, min_score=int(score), max_score=int(score) + 1
    )
    assert isinstance(narrow, PuzzlePublicRecord)
    nothing = random_puzzle.sync(client=client, stars=practice.stars, min_score=10**9)
    assert isinstance(nothing, Error)
    again = list_techniques.sync_detailed(client=client, if_none_match=catalogue.headers["etag"])
    seen["techniques"] = {
        "names": [item.name.value for item in catalogue.parsed.techniques],
        "rare": rare.name.value,
        "rare_count": rare.puzzles,
        "difficulty": rare.difficulty.value,
        "practice": practice.techniques,
        "narrow": [narrow.techniques, narrow.stars, narrow.score],
        "nothing": nothing.error,
        "again": again.status_code.value,
    }

    today = daily_puzzle.sync_detailed(client=client)
    assert isinstance(today.parsed, PuzzlePublicRecord)
    dated = daily_puzzle.sync(client=client, date=datetime.datetime.now(datetime.UTC).date())
    assert isinstance(dated, PuzzlePublicRecord)
    hard = daily_puzzle.sync(client=client, difficulty=DifficultyFilter.HARD, date=datetime.date(2026, 1, 31))
    assert isinstance(hard, PuzzlePublicRecord)
    later = daily_puzzle.sync(client=client, date=datetime.date(2999, 1, 1))
    assert isinstance(later, Error)
    revalidated_day = daily_puzzle.sync_detailed(client=client, if_none_match=today.headers["etag"])
    seen["daily"] = {
        "today": today.parsed.canonical_id,
        "dated": dated.canonical_id,
        "hard": hard.difficulty.value,
        "cache_control": today.headers["cache-control"],
        "later": later.error,
        "again": revalidated_day.status_code.value,
    }

    code = record.canonical_id
    by_id = get_puzzle.sync_detailed(code, client=client)
    assert isinstance(by_id.parsed, PuzzlePublicRecord)
    revalidated = get_puzzle.sync_detailed(code, client=client, if_none_match=by_id.headers["etag"])
    seen["puzzle"] = {"code": by_id.parsed.canonical_id, "again": revalidated.status_code.value}

    solution = get_solution.sync_detailed(code, client=client)
    assert isinstance(solution.parsed, SolutionResponse)
    revalidated = get_solution.sync_detailed(code, client=client, if_none_match=solution.headers["etag"])
    seen["solution"] = {"length": len(solution.parsed.solution), "again": revalidated.status_code.value}

    grid = get_grid.sync_detailed(record.puzzle, client=client)
    assert isinstance(grid.parsed, GridAnswer)
    regraded = get_grid.sync_detailed(record.puzzle, client=client, if_none_match=grid.headers["etag"])
    by_id_hint = get_puzzle_hint.sync(code, client=client, board=record.puzzle)
    assert isinstance(by_id_hint, Hint)
    grid_hint = get_grid_hint.sync(record.puzzle, client=client, board=record.puzzle)
    assert isinstance(grid_hint, Hint)
    several = get_grid.sync("." * 81, client=client)
    assert isinstance(several, GridError)
    seen["grids"] = {
        "in_pool": grid.parsed.in_pool,
        "code": grid.parsed.canonical_id,
        "again": regraded.status_code.value,
        "hint": by_id_hint.status.value,
        "same_hint": by_id_hint.to_dict() == grid_hint.to_dict(),
        "several": several.error,
    }

    images: dict[str, Any] = {}
    for variant in GetPuzzleImageVariant:
        image = get_puzzle_image.sync_detailed(code, client=client, variant=variant)
        assert isinstance(image.parsed, File)
        png: bytes = image.parsed.payload.read()
        again = get_puzzle_image.sync_detailed(
            code, client=client, variant=variant, if_none_match=image.headers["etag"]
        )
        images[variant.value] = {
            "magic": png[:8].hex(),
            "size": len(png),
            "type": image.headers["content-type"],
            "again": again.status_code.value,
            "again_parsed": again.parsed,
        }
    seen["image"] = images
    formats: dict[str, Any] = {}
    for image_format in GetPuzzleImageFormat:
        picture = get_puzzle_image.sync_detailed(code, client=client, format_=image_format, size=200)
        assert isinstance(picture.parsed, File)
        data: bytes = picture.parsed.payload.read()
        formats[image_format.value] = {"head": data[:16].hex(), "type": picture.headers["content-type"]}
    seen["formats"] = formats

    missing = get_puzzle.sync("UNKNOWN000000", client=client)
    assert isinstance(missing, Error)
    seen["missing"] = missing.error

    exports = pool_exports.sync(client=client)
    assert isinstance(exports, PoolExportsResponse)
    seen["exports"] = {"keys": [item.key for item in exports.objects], "truncated": exports.truncated}
    name = exports.objects[0].url.rsplit("/", 1)[-1]
    download = download_pool_export.sync_detailed(name, client=client)
    seen["download"] = {
        "status": download.status_code.value,
        "size": len(download.content),
        "checksum": download.headers["x-checksum-sha256"],
        "listed": exports.objects[0].sha256,
    }

    first = list_puzzles.sync(client=client, count=5, seed=7)
    assert isinstance(first, PuzzleSet)
    following = list_puzzles.sync(client=client, count=5, seed=7, offset=5, max_clues=81)
    assert isinstance(following, PuzzleSet)
    seen["set"] = {
        "codes": [p.canonical_id for p in first.puzzles] + [p.canonical_id for p in following.puzzles],
        "next": first.next_offset,
        "total": first.total,
    }
    archive = daily_archive.sync(client=client, from_=datetime.date(2026, 1, 1), to=datetime.date(2026, 1, 3))
    assert isinstance(archive, DailyArchive)
    seen["archive"] = [day.canonical_id for day in archive.days]
    pictures = [
        random_puzzle_image.sync_detailed(client=client, difficulty=DifficultyFilter.EASY),
        daily_puzzle_image.sync_detailed(client=client, tz="Asia/Tokyo"),
    ]
    seen["redirects"] = [[p.status_code.value, p.headers["location"]] for p in pictures]

    counters = activity.sync(client=client)
    assert isinstance(counters, ActivityStats)
    seen["activity"] = {
        "scope": counters.scope.value,
        "plays": counters.plays.total,
        "images": counters.downloads.image_puzzle,
    }

    doc = openapi.sync(client=Client(base_url=base_url, raise_on_unexpected_status=True))
    assert isinstance(doc, OpenApiDocument)
    seen["openapi"] = {"openapi": doc.openapi, "version": doc.info.version, "paths": len(doc.paths.to_dict())}

    wrong = health.sync(
        client=AuthenticatedClient(base_url=base_url, token="not-a-key", prefix="", auth_header_name="X-API-Key")
    )
    assert isinstance(wrong, Error)
    seen["unknown_key"] = wrong.error

    # The anonymous limit is small in this server: ask until it is reached (a window may end meanwhile).
    anonymous = Client(base_url=base_url)
    for _ in range(20):
        limited = stats.sync_detailed(client=anonymous)
        if isinstance(limited.parsed, RateLimitError):
            seen["limited"] = {
                "error": limited.parsed.error,
                "retry_after_seconds": limited.parsed.retry_after_seconds,
                "header": limited.headers["retry-after"],
            }
            break
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
