"""The real service, started the way the Procfile starts it, on a free loopback port."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool.export import record_line
from tests.factories import write_export
from tests.helpers import free_port, wait_until
from tests.servers import command, run_server


@pytest.mark.slow
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


def thread_heaps(pid: int) -> list[str]:
    """The heaps glibc made for threads of ``pid`` (each a 64 MiB reservation at a multiple of 64 MiB: what of
    it is in use readable and writable, the rest not), as ``/proc/PID/maps`` ranges."""
    rows = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        span, perms, *rest = line.split()
        low, high = (int(end, 16) for end in span.split("-"))
        rows.append((low, high, perms, len(rest) > 3))  # a fourth field after the permissions: a name
    heap = 64 << 20
    found = []
    for (low, high, perms, named), after in zip(rows, [*rows[1:], None], strict=True):
        if named or perms != "rw-p" or low % heap:
            continue
        end = after[1] if after is not None and after[0] == high and after[2] == "---p" and not after[3] else high
        if end - low == heap:
            found.append(f"{low:x}-{high:x}")
    return found


def served_by(launcher: int, workers: int) -> list[int]:
    """The processes of a server started with ``workers`` that serve: the launcher alone for one, else its workers
    (multiprocessing's children, less its resource tracker)."""
    if workers == 1:
        return [launcher]
    children = Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()
    return [int(pid) for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's /proc/PID/maps")
@pytest.mark.parametrize("workers", [1, 2])
def test_the_servers_threads_allocate_from_one_heap(export_dir: Path, tmp_path: Path, workers: int) -> None:
    # One heap is what malloc_trim shrinks whole: a heap of a thread's own keeps its free top (sudokupool.serving.heap).
    env = {"SUDOKUPOOL_EXPORTS": str(export_dir), "WEB_CONCURRENCY": str(workers)}
    with run_server(env, tmp_path / "server.log") as server:
        for _ in range(20):
            assert httpx.get(f"{server.url}/api/v2/puzzles/random").status_code == 200
        wait_until(lambda: server.output().count("loaded 40 puzzles") == workers, "every worker loaded")
        pids = served_by(server.process.pid, workers)
        assert len(pids) == workers
        assert {pid: thread_heaps(pid) for pid in pids} == {pid: [] for pid in pids}


def run_failing(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        command(free_port()), env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.slow
def test_a_truncated_export_stops_startup_with_one_clear_line(tmp_path: Path, export_dir: Path) -> None:
    data = (export_dir / "pool-20261122T100000Z.ndjson.gz").read_bytes()
    (tmp_path / "pool-20261122T100000Z.ndjson.gz").write_bytes(data[: len(data) // 2])
    result = run_failing({"SUDOKUPOOL_EXPORTS": str(tmp_path)})
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert f"cannot load export {tmp_path}/pool-20261122T100000Z.ndjson.gz: truncated gzip stream" in output


def failure_lines(output: str) -> list[str]:
    """The lines of the server's output that are about the failure (not uvicorn's own progress lines)."""
    progress = ("Started server process", "Waiting for application startup", "Application startup failed")
    return [line for line in output.splitlines() if line.strip() and not any(p in line for p in progress)]


def deep_record(record: dict[str, Any]) -> bytes:
    """``record`` with a value nested 300 deep in a solve_path step: it parses, but orjson cannot write it."""
    steps = [{**record["solve_path"][0], "explanation": "@deep@"}, *record["solve_path"][1:]]
    return orjson.dumps({**record, "solve_path": steps}).replace(b'"@deep@"', b"[" * 300 + b"]" * 300)


@pytest.mark.slow
def test_a_record_that_cannot_be_served_stops_startup_with_one_line(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    # Before: a TypeError out of the lifespan, "ASGI 'lifespan' protocol appears unsupported", and a
    # process answering 500 to every request.
    write_export(tmp_path / "pool-20261122T100000Z.ndjson.gz", records, extra_lines=(deep_record(records[0]),))
    result = run_failing({"SUDOKUPOOL_EXPORTS": str(tmp_path)})
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert failure_lines(output) == [
        f"sudokupool: cannot load export {tmp_path}/pool-20261122T100000Z.ndjson.gz: 1 bad line of 41 read, more than "
        "SUDOKUPOOL_MAX_BAD_LINES=0.1% allows; the first is line 41: bad-step: solve_path step 1 explanation: "
        "Expected `str`, got `array`"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bound", "served"),
    [
        pytest.param(None, False, id="default"),
        pytest.param("4", True, id="count"),
        pytest.param("3", False, id="count-below"),
        pytest.param("10%", True, id="share"),
        pytest.param("9%", False, id="share-below"),
    ],
)
def test_startup_applies_the_bound_on_bad_lines(
    tmp_path: Path, records: list[dict[str, Any]], bound: str | None, served: bool
) -> None:
    # 4 bad lines of 44 (9.1 %): before, an export this corrupt was served, a warning a line.
    bad = (b"{", deep_record(records[1]), b"[]", record_line(records[2]).rstrip(b"\n"))
    write_export(tmp_path / "pool-20261122T100000Z.ndjson.gz", records, extra_lines=bad)
    env = {"SUDOKUPOOL_EXPORTS": str(tmp_path)}
    if bound is not None:
        env["SUDOKUPOOL_MAX_BAD_LINES"] = bound
    if served:
        with run_server(env, tmp_path / "server.log") as server:
            assert httpx.get(f"{server.url}/api/v2/stats").json()["total"] == 40
        assert "loaded 40 puzzles, skipped 4" in server.output()
        return
    result = run_failing(env)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    [line] = failure_lines(output)
    assert f"4 bad lines of 44 read, more than SUDOKUPOOL_MAX_BAD_LINES={bound or '0.1%'} allows" in line
    assert line.endswith("the first is line 41: invalid-json: unexpected end of data: line 1 column 2 (char 1)")


@pytest.mark.anyio
async def test_any_startup_failure_is_reported_as_failed_startup(monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(Settings())

    async def broken() -> None:
        raise RuntimeError("something\nunexpected")

    monkeypatch.setattr(app, "startup", broken)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "lifespan"}, receive, send)
    assert sent == [
        {"type": "lifespan.startup.failed", "message": "startup failed: RuntimeError: something unexpected"}
    ]


@pytest.mark.slow
def test_a_missing_export_directory_stops_startup(tmp_path: Path) -> None:
    result = run_failing({"SUDOKUPOOL_EXPORTS": str(tmp_path / "nowhere")})
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "nowhere: no such file or directory" in output


@pytest.mark.slow
def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sudokupool", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    assert "serve" in result.stdout
    assert "check" in result.stdout


@pytest.mark.slow
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


@pytest.mark.slow
def test_names_with_no_real_time_are_ignored_by_startup_sync_and_listing(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    write_export(tmp_path / "pool-20261122T100000Z.ndjson.gz", records[:10])
    misdated = ["pool-20261399T000000Z.ndjson", "pool-20260230T000000Z.ndjson.gz"]
    for name in misdated:
        write_export(tmp_path / name, records)
    env = {"SUDOKUPOOL_EXPORTS": str(tmp_path), "SUDOKUPOOL_SYNC_INTERVAL": "1"}
    with run_server(env, tmp_path / "server.log") as server:
        assert httpx.get(f"{server.url}/api/v2/stats").json()["total"] == 10
        listing = httpx.get(f"{server.url}/api/v2/pool-exports")
        assert listing.status_code == 200
        assert [item["key"] for item in listing.json()["objects"]] == ["pool-20261122T100000Z.ndjson.gz"]
        # A newer export is still found by the live sync.
        write_export(tmp_path / "pool-20261122T110000Z.ndjson.gz", records[:20])
        wait_until(
            lambda: httpx.get(f"{server.url}/api/v2/stats").json()["total"] == 20,
            "the newer export served",
            seconds=20,
            log=server.output,
        )
    output = server.output()
    assert "Traceback" not in output
    for name in misdated:
        assert output.count(f"ignoring {name}: its name holds no real UTC time") == 1


def test_startup_leaves_what_lives_as_long_as_the_process_out_of_later_collections_and_not_the_pool() -> None:
    # A process of its own: this one's collector may have been frozen by an earlier test's app.
    code = """
import asyncio, gc, os
from sudokupool.app import create_app
from sudokupool.config import Settings
assert gc.get_freeze_count() == 0
settings = Settings(exports=os.environ["EXPORTS"], sync_interval=0)
app = create_app(settings)
asyncio.run(app.startup())
frozen = gc.get_freeze_count()
tracked = {id(o) for o in gc.get_objects()}
pool = app.runtime.current()
made_since = [pool]
second = create_app(settings)
asyncio.run(second.startup())
print(frozen, id(app) in tracked, id(pool) in tracked, any(o is made_since for o in gc.get_objects()))
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "EXPORTS": str(Path(__file__).resolve().parents[1] / "snapshots")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    frozen, app_collected, pool_collected, second_froze_nothing = done.stdout.split()
    assert int(frozen) > 10_000  # the modules and their functions, types and dicts
    # The second app's startup left what the first one's made since to the collector.
    assert (app_collected, pool_collected, second_froze_nothing) == ("False", "True", "True")
