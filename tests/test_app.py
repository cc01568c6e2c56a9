"""The real service, started the way the Procfile starts it, on a free loopback port."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.servers import command, free_port, run_server


def test_serves_the_latest_export_from_a_directory(
    export_dir: Path, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir)}, tmp_path / "server.log") as server:
        record = records[0]
        response = httpx.get(f"{server.url}/api/v2/puzzles/{record['canonical_id']}")
        assert response.status_code == 200
        assert response.json()["puzzle"] == record["puzzle"]
        listing = httpx.get(f"{server.url}/api/v2/pool-exports").json()
        assert listing["truncated"] is False
        assert [item["key"] for item in listing["objects"]] == ["pool-20261122T100000Z.ndjson.gz"]
        assert listing["objects"][0]["uploaded"].endswith("Z")
        assert listing["objects"][0]["size"] == (export_dir / "pool-20261122T100000Z.ndjson.gz").stat().st_size
    assert "loaded 40 puzzles, skipped 0" in server.output()


def run_failing(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        command(free_port()), env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_truncated_export_stops_startup_with_one_clear_line(tmp_path: Path, export_dir: Path) -> None:
    data = (export_dir / "pool-20261122T100000Z.ndjson.gz").read_bytes()
    (tmp_path / "pool-20261122T100000Z.ndjson.gz").write_bytes(data[: len(data) // 2])
    result = run_failing({"SUDOKUPOOL_EXPORTS": str(tmp_path)})
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert f"cannot load export {tmp_path}/pool-20261122T100000Z.ndjson.gz: truncated gzip stream" in output


def test_a_missing_export_directory_stops_startup(tmp_path: Path) -> None:
    result = run_failing({"SUDOKUPOOL_EXPORTS": str(tmp_path / "nowhere")})
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "nowhere: no such file or directory" in output


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sudokupool", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    assert "serve" in result.stdout
    assert "check" in result.stdout


def test_every_error_of_the_real_server_is_json(
    tmp_path: Path, export_dir: Path, records: list[dict[str, Any]]
) -> None:
    """Errors as the Procfile's server sends them (uvicorn hands the app the raw path, a HEAD, a Range)."""
    puzzle = records[0]["canonical_id"]
    preflight = {"Origin": "https://example.org", "Access-Control-Request-Method": "GET"}
    cases = [
        ("OPTIONS", "/api/v2/stats", {**preflight, "Access-Control-Request-Headers": "X-Evil"}, 400),
        ("GET", "/static/app.js", {"Range": "bytes=99999999-"}, 416),
        ("GET", "/static/app.js", {"Range": "bytes=abc"}, 400),
        ("GET", f"/api/v1/puzzles/{puzzle}%2fsolution", {}, 404),
        ("GET", f"/api/puzzles/{puzzle}%2Fsolution", {}, 404),
        ("GET", f"/api/v2/puzzles/{puzzle}/image?variant=", {}, 400),
        ("POST", "/", {}, 405),
        ("DELETE", "/api/v2/health", {}, 405),
        ("GET", "/static/missing.js", {}, 404),
        ("GET", "/api/v2/nothing", {}, 404),
    ]
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir)}, tmp_path / "server.log") as server:
        for method, path, headers, status in cases:
            response = httpx.request(method, f"{server.url}{path}", headers=headers, timeout=5)
            where = f"{method} {path} {headers}"
            assert response.status_code == status, where
            assert response.headers["content-type"] == "application/json", where
            assert set(response.json()) == {"error"}, where
            assert response.json()["error"], where
        head = httpx.head(f"{server.url}/nothing", timeout=5)
        assert head.status_code == 404
        assert head.headers["content-type"] == "application/json"
        assert int(head.headers["content-length"]) == len(b'{"error":"not found"}')
