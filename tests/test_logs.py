from __future__ import annotations

import json
import logging
import os
import re
import sys
from pathlib import Path

import httpx
import pytest
from uvicorn.logging import AccessFormatter

from sudokupool.logs import RedactApiKeys, log_config, redact
from tests.helpers import wait_until
from tests.servers import run_server

SECRET = "s3cr3t-key-value"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("/api/v2/health?api_key=abc", "/api/v2/health?api_key=REDACTED", id="only-parameter"),
        pytest.param("/x?a=1&api_key=abc&b=2", "/x?a=1&api_key=REDACTED&b=2", id="middle"),
        pytest.param("/x?api_key=a&api_key=b", "/x?api_key=REDACTED&api_key=REDACTED", id="twice"),
        pytest.param("/x?API_KEY=abc", "/x?API_KEY=REDACTED", id="other-case"),
        pytest.param("/x?api%5Fkey=abc", "/x?api%5Fkey=REDACTED", id="percent-encoded-name"),
        pytest.param("/x?api_key=", "/x?api_key=REDACTED", id="empty"),
        pytest.param("/x?my_api_key=abc", "/x?my_api_key=abc", id="other-parameter"),
        pytest.param("/api/v2/puzzles/random?difficulty=easy", "/api/v2/puzzles/random?difficulty=easy", id="none"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_the_filter_redacts_uvicorns_access_record() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("192.0.2.1:0", "GET", f"/api/v2/health?api_key={SECRET}", "1.1", 200), None,
    )  # fmt: skip
    assert RedactApiKeys().filter(record)
    line = AccessFormatter(fmt="%(client_addr)s %(request_line)s %(status_code)s", use_colors=False).format(record)
    assert line == "192.0.2.1:0 GET /api/v2/health?api_key=REDACTED HTTP/1.1 200 OK"


def test_log_config_installs_the_filter_on_the_access_logger() -> None:
    config = log_config("warning")
    assert "redact_api_keys" in config["loggers"]["uvicorn.access"]["filters"]
    assert config["loggers"]["uvicorn.access"]["level"] == "WARNING"
    assert config["formatters"]["access"]["()"] == "uvicorn.logging.AccessFormatter"


SERVE_WITH_LOG_CONFIG = """
import sys, uvicorn
from sudokupool.logs import log_config
uvicorn.run("tests.ratelimit.apps:create_test_app_without_redaction", factory=True, host="127.0.0.1",
            port=int(sys.argv[1]), proxy_headers=False, log_config=log_config("info"))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            [sys.executable, "-m", "uvicorn", "--factory", "tests.ratelimit.apps:create_test_app",
             "--host", "127.0.0.1", "--port", "{port}", "--no-proxy-headers"],
            id="uvicorn-cli-factory-installs-it",
        ),
        pytest.param([sys.executable, "-c", SERVE_WITH_LOG_CONFIG, "{port}"], id="log-config-installs-it"),
    ],
)  # fmt: skip
def test_a_real_access_log_never_contains_a_key(tmp_path: Path, command: list[str]) -> None:
    with run_server({"SUDOKUPOOL_LIMIT_ANONYMOUS": "1000"}, tmp_path / "server.log", argv=command) as server:
        unknown = httpx.get(f"{server.url}/api/v2/health?difficulty=easy&api_key={SECRET}")
    access = server.output()
    assert unknown.status_code == 401
    assert SECRET not in access
    assert "GET /api/v2/health?difficulty=easy&api_key=REDACTED HTTP/1.1" in access


def test_the_access_log_writes_uvicorns_line_with_keys_redacted() -> None:
    import asyncio
    import io

    from sudokupool.logs import AccessLog

    stream = io.StringIO()
    log = AccessLog(stream, delay=0.01)
    scope = {
        "type": "http", "client": ("198.51.100.7", 0), "method": "GET", "http_version": "1.1",
        "path": "/api/v2/puzzles/random", "raw_path": b"/api/v2/puzzles/random",
        "query_string": f"difficulty=hard&api_key={SECRET}".encode(),
    }  # fmt: skip
    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    async def main() -> None:
        wrapped = log.wrap(scope, send)
        await wrapped({"type": "http.response.start", "status": 200, "headers": []})
        await wrapped({"type": "http.response.body", "body": b"{}"})
        assert stream.getvalue() == ""  # batched
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    expected = '198.51.100.7:0 - "GET /api/v2/puzzles/random?difficulty=hard&api_key=REDACTED HTTP/1.1" 200'
    assert stream.getvalue() == f"INFO:     {expected}\n"


# -- SUDOKUPOOL_LOG_FORMAT=json ------------------------------------------------------------------------

ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def test_a_json_line_has_time_level_pid_message_and_the_lines_fields() -> None:
    from sudokupool.logs import JsonFormatter

    record = logging.LogRecord("sudokupool.sync", logging.WARNING, __file__, 1, "%s: loaded %d", ("e", 3), None)
    record.export, record.count, record.duration = "pool-20261122T100000Z.ndjson.gz", 3, 0.5
    line = JsonFormatter().format(record)
    assert "\n" not in line
    fields = json.loads(line)
    assert ISO_UTC.match(fields.pop("time"))
    assert fields == {
        "level": "WARNING",
        "pid": os.getpid(),
        "logger": "sudokupool.sync",
        "message": "e: loaded 3",
        "export": "pool-20261122T100000Z.ndjson.gz",
        "count": 3,
        "duration": 0.5,
    }
    try:
        raise ValueError("boom")
    except ValueError:
        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed\nhere", None, sys.exc_info())
    fields = json.loads(JsonFormatter().format(failed))
    assert fields["message"] == "failed\nhere"
    assert "ValueError: boom" in fields["exception"]


def test_log_config_json_formats_every_uvicorn_handler_and_keeps_the_redaction() -> None:
    from sudokupool.logs import JsonFormatter

    config = log_config("info", "json")
    assert {spec["()"] for spec in config["formatters"].values()} == {"sudokupool.logs.JsonFormatter"}
    assert "redact_api_keys" in config["loggers"]["uvicorn.access"]["filters"]
    assert log_config("info")["formatters"] == log_config()["formatters"] != config["formatters"]
    assert isinstance(JsonFormatter(), logging.Formatter)


def test_the_access_log_in_json_redacts_keys() -> None:
    import asyncio
    import io

    from sudokupool.logs import AccessLog

    stream = io.StringIO()
    log = AccessLog(stream, json=True)
    scope = {
        "type": "http", "client": ("198.51.100.7", 5), "method": "GET", "http_version": "1.1",
        "path": "/api/v2/stats", "raw_path": b"/api/v2/stats", "query_string": f"api_key={SECRET}".encode(),
    }  # fmt: skip

    async def main() -> None:
        log.write(scope, 401)
        log.flush()

    asyncio.run(main())
    fields = json.loads(stream.getvalue())
    assert SECRET not in stream.getvalue()
    assert fields["message"] == '198.51.100.7:5 - "GET /api/v2/stats?api_key=REDACTED HTTP/1.1" 401'
    assert (fields["level"], fields["pid"], fields["status"]) == ("INFO", os.getpid(), 401)
    assert ISO_UTC.match(fields["time"])


@pytest.mark.slow
@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_every_line_of_a_real_server_is_json(tmp_path: Path, server: str) -> None:
    env = {"SUDOKUPOOL_SERVER": server, "SUDOKUPOOL_LOG_FORMAT": "json", "SUDOKUPOOL_ACCESS_LOG": "on"}
    with run_server(env, tmp_path / "server.log") as running:
        assert httpx.get(f"{running.url}/api/v2/stats?api_key={SECRET}").status_code == 401
        forwarded = {"x-forwarded-for": "203.0.113.9"}
        for _ in range(2):
            assert httpx.get(f"{running.url}/api/v1/stats", headers=forwarded).status_code == 200
        # The access log writes in batches (at most half a second late): wait for the last line.
        wait_until(
            lambda: running.output().count("GET /api/v1/stats") == 2, "the access log's batch", log=running.output
        )
    lines = [json.loads(line) for line in running.output().splitlines() if line.strip()]
    for fields in lines:
        assert ISO_UTC.match(fields["time"]) and fields["level"] and fields["pid"] and "message" in fields
    messages = [fields["message"] for fields in lines]
    assert SECRET not in running.output()
    assert any("GET /api/v2/stats?api_key=REDACTED HTTP/1.1" in message for message in messages)
    # The server's own lines, the load's with its fields, and one warning about X-Forwarded-For.
    assert any(fields["logger"] in ("uvicorn.error", "_granian") for fields in lines)
    (loaded,) = [fields for fields in lines if fields["logger"] == "sudokupool.sync"]
    assert loaded["count"] == 2400 and loaded["export"].startswith("pool-") and loaded["duration"] >= 0
    warnings = [fields for fields in lines if "X-Forwarded-For" in fields["message"]]
    assert len(warnings) == 1 and warnings[0]["level"] == "WARNING"


@pytest.mark.slow
def test_plain_lines_of_several_workers_carry_the_pid(tmp_path: Path) -> None:
    with run_server({"WEB_CONCURRENCY": "2"}, tmp_path / "server.log") as running:
        # The server answers once one worker is ready; the other may still be loading.
        wait_until(
            lambda: running.output().count("loaded 2400 puzzles") == 2, "both workers' load lines", log=running.output
        )
    loaded = [line for line in running.output().splitlines() if "loaded 2400 puzzles" in line]
    pids = {re.match(r"^INFO: +\[(\d+)\] ", line).group(1) for line in loaded}  # type: ignore[union-attr]
    assert len(loaded) == 2 and len(pids) == 2
