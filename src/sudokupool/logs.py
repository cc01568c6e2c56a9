"""Logging for uvicorn that never writes an API key: ``api_key=...`` in a query string is redacted.

Two ways in, because uvicorn is started two ways: ``sudokupool serve`` passes
``log_config=log_config(level)``; the Procfile's ``uvicorn`` command line configures uvicorn's own
logging, so ``create_app`` calls :func:`install_redaction` on the already configured logger.
Either way the filter sits on the ``uvicorn.access`` logger itself, so every handler (and anything
the record propagates to) sees the redacted record.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import sys
from typing import IO, Any

import uvicorn.config
from starlette.types import Message, Scope, Send

ACCESS_LOGGER = "uvicorn.access"

# Query parameter names are matched as the limiter reads them (``api_key``) and also in other case
# or percent-encoded (``api%5Fkey``), so no spelling a client tries ends up in the log.
_API_KEY = re.compile(r"(?i)((?:^|[?&;])api(?:_|%5f)key=)[^&;#\s\"]*")


def redact(text: str) -> str:
    """``text`` with the value of every ``api_key`` query parameter replaced by ``REDACTED``."""
    if "key" not in text.lower():
        return text
    return _API_KEY.sub(r"\1REDACTED", text)


class RedactApiKeys(logging.Filter):
    """Rewrites a record's message and string arguments with :func:`redact`; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in args)
        elif isinstance(args, dict):
            record.args = {name: redact(arg) if isinstance(arg, str) else arg for name, arg in args.items()}
        return True


def install_redaction(logger_name: str = ACCESS_LOGGER) -> None:
    """Add :class:`RedactApiKeys` to the logger (once, however often this is called)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(existing, RedactApiKeys) for existing in logger.filters):
        logger.addFilter(RedactApiKeys())


def log_config(level: str = "info") -> dict[str, Any]:
    """uvicorn's default ``LOGGING_CONFIG`` at ``level``, with the redaction filter on the access logger."""
    config: dict[str, Any] = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_api_keys"] = {"()": f"{__name__}.RedactApiKeys"}
    loggers = config["loggers"]
    loggers[ACCESS_LOGGER].setdefault("filters", []).append("redact_api_keys")
    for name in ("uvicorn", "uvicorn.error", ACCESS_LOGGER):
        loggers.setdefault(name, {})["level"] = level.upper()
    return config


def configure_service_logging(level: str) -> None:
    """Send the service's own log lines (logger ``sudokupool``) to stderr in uvicorn's style, unless the
    host application configured logging itself."""
    log = logging.getLogger("sudokupool")
    log.setLevel(level.upper())
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:%(padding)s%(message)s", defaults={"padding": " "}))
        handler.addFilter(_pad_level)
        log.addHandler(handler)


def _pad_level(record: logging.LogRecord) -> bool:
    # uvicorn aligns messages after "INFO:" in a 10-character column; do the same.
    record.padding = " " * max(1, 9 - len(record.levelname))
    return True


class AccessLog:
    """The service's own access log (``SUDOKUPOOL_ACCESS_LOG=on``), the same on every server: uvicorn's
    line (``INFO:     1.2.3.4:5 - "GET /path?query HTTP/1.1" 200``) with the client the service resolved
    and every ``api_key`` value redacted, written to stdout in batches (at most ``delay`` seconds late,
    and at shutdown). It costs a fraction of a logging call per request (docs/benchmarks.md, Servers)."""

    def __init__(self, stream: IO[str] | None = None, *, delay: float = 0.5, batch: int = 512) -> None:
        self.stream = stream
        self.delay = delay
        self.batch = batch
        self.lines: list[str] = []
        self.timer: asyncio.TimerHandle | None = None

    def wrap(self, scope: Scope, send: Send) -> Send:
        """``send`` that writes the request's line when the response starts."""

        async def logged(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.write(scope, message["status"])
            await send(message)

        return logged

    def write(self, scope: Scope, status: int) -> None:
        client = scope.get("client")
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        query: bytes = scope.get("query_string", b"")
        if query:
            path = redact(path + "?" + query.decode("latin-1"))
        where = f"{client[0]}:{client[1]}" if client else "-"
        self.lines.append(f'INFO:     {where} - "{scope["method"]} {path} HTTP/{scope["http_version"]}" {status}\n')
        if len(self.lines) >= self.batch:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(self.delay, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.lines:
            stream = self.stream or sys.stdout
            stream.write("".join(self.lines))
            stream.flush()
            self.lines.clear()
