from __future__ import annotations

import logging
import sys
from pathlib import Path

import httpx
import pytest
from uvicorn.logging import AccessFormatter

from sudokupool.logs import RedactApiKeys, log_config, redact
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
