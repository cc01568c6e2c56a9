"""The OpenAPI document as a client contract: clients generated from a live server's document work as is.

The generators are test-only tools, installed at pinned versions into a throwaway environment (a venv
and a node_modules folder) that is kept in the user's cache directory (``$XDG_CACHE_HOME`` or
``~/.cache``, under ``sudokupool-test-tools``, built under a file lock: tests/tools.py), so fresh clones
on one machine share it, and is rebuilt when the pins change: openapi-python-client and
datamodel-code-generator from PyPI, openapi-typescript, openapi-fetch, TypeScript and Redocly's CLI
from the npm registry. Each test generates from the
document a real server serves, with no configuration file, then calls every operation through what
was generated (tests/clients/), and type-checks the calling code strictly: nothing in it is a cast.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.technique_table import LEVEL, SCORES
from tests.factories import EXPORT_NAME
from tests.servers import Server, run_server
from tests.tools import QUIET, Tools, run
from tests.tools import tools as cached_tools

# Each test here starts the service (or drives one started for the module) as the Procfile does.
pytestmark = pytest.mark.slow

PYTHON_TOOLS = ("openapi-python-client==0.29.1", "datamodel-code-generator==0.89.0")
NODE_TOOLS = {
    "openapi-typescript": "7.13.0",
    "openapi-fetch": "0.17.0",
    "typescript": "5.9.3",
    "@types/node": "20.19.43",
    "@redocly/cli": "2.77.0",
}
CLIENTS = Path(__file__).resolve().parents[1] / "clients"
KEY = "openapi-clients-test-key"


@pytest.fixture(scope="session")
def tools() -> Tools:
    """The generators, installed once per pin set under a file lock (a first run downloads them: 40-100 s)."""
    return cached_tools("openapi-clients", python=PYTHON_TOOLS, node=NODE_TOOLS)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, export_dir: Path) -> Iterator[Server]:
    """The test export, an issued key, and an anonymous limit small enough to reach (3 a minute)."""
    env = {
        "SUDOKUPOOL_EXPORTS": str(export_dir),
        "SUDOKUPOOL_API_KEYS": hashlib.sha256(KEY.encode()).hexdigest(),
        "SUDOKUPOOL_LIMIT_ANONYMOUS": "3",
        "SUDOKUPOOL_REDIS_URL": "",
        "SUDOKUPOOL_SYNC_INTERVAL": "0",
    }
    log = tmp_path_factory.mktemp("clients") / "server.log"
    with run_server(env, log) as server:
        yield server
    assert "Traceback" not in log.read_text()


def _document(server: Server, path: Path) -> Path:
    path.write_bytes(httpx.get(f"{server.url}/api/v2/openapi.json").content)
    return path


def test_the_generated_python_client_calls_every_operation(
    tools: Tools, server: Server, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    run([tools.bin / "openapi-python-client", "generate", "--url", f"{server.url}/api/v2/openapi.json"], cwd=tmp_path)
    (package,) = tmp_path.iterdir()
    script = CLIENTS / "python_client_calls.py"
    seen = json.loads(run([tools.python, script, server.url, KEY], env={"PYTHONPATH": str(package)}))

    assert seen["health"] == {"ok": True, "export_key": EXPORT_NAME, "fallback": False}
    assert seen["stats"]["total"] == 40
    assert set(seen["stats"]["by_difficulty"]) == {"Easy", "Medium", "Hard", "Expert"}
    random = seen["random"]
    assert random["same"] == random["difficulty"] == random["lower"]
    assert random["used_at"] is None
    assert random["steps"] > 0
    techniques = seen["techniques"]
    assert techniques["names"] == list(SCORES)
    assert techniques["rare_count"] == sum(techniques["rare"] in r["techniques"] for r in records)
    assert techniques["difficulty"] == DIFFICULTIES[LEVEL[techniques["rare"]] - 1]
    assert techniques["rare"] in techniques["practice"]
    narrow_techniques, narrow_stars, narrow_score = techniques["narrow"]
    assert techniques["rare"] in narrow_techniques
    assert narrow_stars in range(1, 6)
    assert isinstance(narrow_score, int)
    assert techniques["nothing"].startswith("no puzzle matches stars=")
    assert techniques["again"] == 304
    daily = seen["daily"]
    assert daily["today"] == daily["dated"]
    assert daily["hard"] == "Hard"
    assert daily["cache_control"].startswith("public, max-age=")
    assert int(daily["cache_control"].rpartition("=")[2]) <= 86_400
    assert daily["later"].startswith("no puzzle of the day for 2999-01-01 yet")
    assert daily["again"] == 304
    assert seen["puzzle"]["again"] == 304
    assert seen["solution"] == {"length": 81, "again": 304}
    for variant in ("puzzle", "solution"):
        image = seen["image"][variant]
        assert image["magic"] == b"\x89PNG\r\n\x1a\n".hex()
        assert image["size"] > 1000
        assert image["type"] == "image/png"
        assert (image["again"], image["again_parsed"]) == (304, None)
    formats = seen["formats"]
    assert set(formats) == {"png", "svg", "webp"}
    assert bytes.fromhex(formats["png"]["head"]).startswith(b"\x89PNG")
    assert bytes.fromhex(formats["svg"]["head"]).startswith(b"<svg ")
    assert bytes.fromhex(formats["webp"]["head"])[8:12] == b"WEBP"
    assert {f: v["type"] for f, v in formats.items()} == {
        "png": "image/png",
        "svg": "image/svg+xml",
        "webp": "image/webp",
    }
    assert seen["missing"] == "no puzzle has that id"
    assert seen["exports"] == {"keys": [EXPORT_NAME], "truncated": False}
    assert seen["activity"]["scope"] == "instance"
    assert seen["activity"]["plays"] >= 4
    assert seen["activity"]["images"] >= 1
    assert seen["openapi"] == {"openapi": "3.0.3", "version": "2.0.0", "paths": 16}
    assert seen["download"]["status"] == 200 and seen["download"]["checksum"] == seen["download"]["listed"]
    assert len(set(seen["set"]["codes"])) == 10 and seen["set"]["next"] == 5 and seen["set"]["total"] == 40
    assert len(seen["archive"]) == 3
    assert [status for status, _ in seen["redirects"]] == [302, 302]
    assert seen["unknown_key"] == "unknown API key"
    limited = seen["limited"]
    assert limited["error"] == "rate limit exceeded"
    assert str(limited["retry_after_seconds"]) == limited["header"]

    # The calling code type-checks against the generated client with no cast and no ignore.
    assert "cast(" not in script.read_text()
    assert "type: ignore" not in script.read_text()
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable", tools.python, script],
        env={**os.environ, "MYPYPATH": str(package), "MYPY_CACHE_DIR": str(tools.bin.parent.parent / "mypy-cache")},
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _responses(server: Server) -> list[tuple[str, Any]]:
    """Real response bodies of every JSON operation, each with the name of the schema it must match."""
    keyed = httpx.Client(base_url=server.url, headers={"X-API-Key": KEY})
    record = keyed.get("/api/v2/puzzles/random").json()
    code = record["canonical_id"]
    cases: list[tuple[str, Any]] = [
        ("Health", keyed.get("/api/v2/health").json()),
        ("GlobalStats", keyed.get("/api/v2/stats").json()),
        ("ActivityStats", keyed.get("/api/v2/stats/activity").json()),
        ("PuzzlePublicRecord", record),
        ("PuzzlePublicRecord", keyed.get("/api/v2/puzzles/random", params={"difficulty": record["difficulty"]}).json()),
        ("PuzzlePublicRecord", keyed.get(f"/api/v2/puzzles/{code}").json()),
        ("SolutionResponse", keyed.get(f"/api/v2/puzzles/{code}/solution").json()),
        ("PoolExportsResponse", keyed.get("/api/v2/pool-exports").json()),
        ("TechniqueCatalogue", keyed.get("/api/v2/techniques").json()),
        ("PuzzlePublicRecord", keyed.get("/api/v2/puzzles/daily", params={"difficulty": "medium"}).json()),
        ("PuzzlePublicRecord", keyed.get("/api/v2/puzzles/random", params={"stars": record["stars"]}).json()),
        ("Error", keyed.get("/api/v2/puzzles/random", params={"technique": "nope"}).json()),
        ("OpenApiDocument", keyed.get("/api/v2/openapi.json").json()),
        ("Error", keyed.get("/api/v2/puzzles/UNKNOWN000000").json()),
        ("Error", keyed.get("/api/v2/puzzles/random", params={"difficulty": "nope"}).json()),
    ]
    for _ in range(20):
        limited = httpx.get(f"{server.url}/api/v2/stats")
        if limited.status_code == 429:
            cases.append(("RateLimitError", limited.json()))
            break
    assert cases[-1][0] == "RateLimitError"
    return cases


def test_datamodel_code_generator_models_validate_real_responses(tools: Tools, server: Server, tmp_path: Path) -> None:
    # --strict-nullable: without it the generator ignores OpenAPI 3.0's `nullable` (docs/api.md says so).
    document = _document(server, tmp_path / "openapi.json")
    models = tmp_path / "models.py"
    run(
        [tools.bin / "datamodel-codegen", "--input", document, "--input-file-type", "openapi", "--output", models,
         "--output-model-type", "pydantic_v2.BaseModel", "--strict-nullable", "--formatters", "builtin"]
    )  # fmt: skip
    cases = _responses(server)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    results = json.loads(run([tools.python, CLIENTS / "datamodel_validate.py", tmp_path, tmp_path / "cases.json"]))
    assert [name for name, _ in results] == [name for name, _ in cases]
    assert [error for _, error in results if error is not None] == []
    # A body that breaks its schema is refused, so the check above can fail.
    bad = [["PuzzlePublicRecord", {**cases[3][1], "difficulty": "Trivial"}], ["Health", {"ok": True}]]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = json.loads(run([tools.python, CLIENTS / "datamodel_validate.py", tmp_path, tmp_path / "bad.json"]))
    assert all(error is not None for _, error in refused)


def test_the_typescript_client_compiles_strictly_and_calls_every_operation(
    tools: Tools, server: Server, tmp_path: Path
) -> None:
    bin_ = tools.node_modules / ".bin"
    run([bin_ / "openapi-typescript", f"{server.url}/api/v2/openapi.json", "-o", tmp_path / "schema.ts"])
    shutil.copy(CLIENTS / "typescript_client_calls.ts", tmp_path / "main.ts")
    (tmp_path / "node_modules").symlink_to(tools.node_modules)
    config = {
        "compilerOptions": {
            "strict": True,
            "noUncheckedIndexedAccess": True,
            # Only the packages' own declarations go unchecked (slow, and not ours): the generated
            # types are a .ts file, so they are checked with the calling code.
            "skipLibCheck": True,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "types": ["node"],
            "outDir": "out",
        },
        "files": ["main.ts"],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    run([bin_ / "tsc", "-p", tmp_path])
    assert " as " not in (CLIENTS / "typescript_client_calls.ts").read_text()
    seen = json.loads(run(["node", tmp_path / "out" / "main.js", server.url, KEY]))

    assert seen["health"] == {"exportKey": EXPORT_NAME, "lastError": None}
    assert seen["stats"]["total"] == 40
    random = seen["random"]
    assert random["same"] == random["difficulty"]
    assert random["lower"] == "Easy"
    assert random["usedAt"] is None
    techniques = seen["techniques"]
    assert techniques["count"] == len(SCORES)
    assert techniques["bounded"] == "Expert"
    assert techniques["tooHigh"] == {"status": 400, "message": "min_score must not be above max_score"}
    assert isinstance(techniques["practice"], list) or techniques["practice"].startswith("no puzzle matches")
    assert seen["daily"]["today"] == seen["daily"]["dated"]
    assert seen["daily"]["easy"] == "Easy"
    assert seen["daily"]["impossible"] == {"status": 400, "message": "date must be a calendar date as YYYY-MM-DD"}
    assert seen["puzzle"]["again"] == 304
    assert seen["solution"] == {"length": 81}
    assert seen["image"]["type"] == "image/png"
    assert seen["image"]["size"] > 1000
    assert seen["svg"]["type"] == "image/svg+xml"
    assert seen["svg"]["head"].startswith('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300"')
    assert seen["missing"] == {"status": 404, "message": "no puzzle has that id"}
    assert seen["exports"] == {"keys": [EXPORT_NAME]}
    assert seen["activity"]["plays"] >= 3
    assert seen["openapi"] == {"openapi": "3.0.3", "version": "2.0.0"}
    assert seen["download"]["status"] == 200 and seen["download"]["checksum"] == seen["download"]["sha256"]
    assert len(set(seen["set"]["codes"])) == 4 and seen["set"]["next"] == 4
    assert seen["archive"] == ["2026-01-02", "2026-01-01"]
    assert seen["redirects"] == [302, 302]


def test_redocly_recommended_rules_leave_only_the_explained_warning(
    tools: Tools, server: Server, tmp_path: Path
) -> None:
    document = _document(server, tmp_path / "openapi.json")
    done = subprocess.run(
        [tools.node_modules / ".bin" / "redocly", "lint", "--extends=recommended", "--format=json", document],
        env={**os.environ, **QUIET},
        capture_output=True,
        text=True,
    )
    report = json.loads(done.stdout)
    problems = [(p["ruleId"], p["location"][0]["pointer"]) for p in report["problems"]]
    # docs/api.md explains them: fetching this document never answers 4xx (no key check, no limit), and the
    # image redirects' success is their 302.
    assert sorted(problems) == [
        ("operation-2xx-response", "#/paths/~1api~1v2~1puzzles~1daily~1image/get/responses"),
        ("operation-2xx-response", "#/paths/~1api~1v2~1puzzles~1random~1image/get/responses"),
        ("operation-4xx-response", "#/paths/~1api~1v2~1openapi.json/get/responses"),
    ]
    assert report["totals"]["errors"] == 0
