"""The service's logs: plain uvicorn-style lines or JSON (``SUDOKUPOOL_LOG_FORMAT``), never an API key.

``api_key=...`` in a query string is redacted. Two ways in, because uvicorn is started two ways:
``sudokupool serve`` passes ``log_config=log_config(level, format)``; the Procfile's ``uvicorn`` command
line configures uvicorn's own logging, so ``create_app`` calls :func:`install_redaction` on the already
configured logger. Either way the filter sits on the ``uvicorn.access`` logger itself, so every handler
(and anything the record propagates to) sees the redacted record.

With ``SUDOKUPOOL_LOG_FORMAT=json`` every line is one JSON object (:class:`JsonFormatter`): the service's
own lines, uvicorn's and granian's (through their logging configuration) and the access log's.

:func:`counted` words a count for these lines and the commands' reports: ``1 bad line``, ``2 bad lines``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import re
import sys
import time
from datetime import UTC, datetime
from typing import IO, Any, Final

import orjson
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


#: The attributes every LogRecord has; any other attribute is a field of the line (``extra=``).
_RECORD_ATTRIBUTES: Final = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}


def utc_time(seconds: float) -> str:
    """``seconds`` since the epoch as ISO 8601 UTC to the millisecond: ``2026-11-26T03:40:01.123Z``."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time`` (ISO 8601 UTC), ``level``, ``pid``, ``logger``, ``message``, then the
    record's own fields (``extra=``: ``export``, ``node``, ``count``, ``duration``...) and ``exception``
    (the traceback as one string) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = {
            "time": utc_time(record.created),
            "level": record.levelname,
            "pid": record.process,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in record.__dict__.items():
            if name not in _RECORD_ATTRIBUTES and not name.startswith("_"):
                fields[name] = value
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(fields, default=str).decode()


def json_line(message: str, *, level: str = "ERROR", logger: str = "sudokupool", **fields: Any) -> str:
    """The JSON line :class:`JsonFormatter` would write for ``message``, for lines written without logging."""
    head = {"time": utc_time(datetime.now(UTC).timestamp()), "level": level, "pid": os.getpid(), "logger": logger}
    return orjson.dumps({**head, "message": message, **fields}).decode()


def log_config(level: str = "info", log_format: str = "plain") -> dict[str, Any]:
    """uvicorn's default ``LOGGING_CONFIG`` at ``level``, with the redaction filter on the access logger
    and, for ``log_format="json"``, :class:`JsonFormatter` on every handler."""
    # Imported here: the commands that serve nothing (most of them) start without uvicorn.
    import uvicorn.config

    config: dict[str, Any] = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_api_keys"] = {"()": f"{__name__}.RedactApiKeys"}
    loggers = config["loggers"]
    loggers[ACCESS_LOGGER].setdefault("filters", []).append("redact_api_keys")
    for name in ("uvicorn", "uvicorn.error", ACCESS_LOGGER):
        loggers.setdefault(name, {})["level"] = level.upper()
    if log_format == "json":
        config["formatters"] = {name: {"()": f"{__name__}.JsonFormatter"} for name in config["formatters"]}
    return config


def granian_log_config(log_format: str) -> dict[str, Any] | None:
    """What granian's ``--log-config`` adds to its logging configuration: :class:`JsonFormatter` for both of
    its formatters with ``log_format="json"``; None for plain lines (granian's own)."""
    if log_format != "json":
        return None
    return {"formatters": {name: {"()": f"{__name__}.JsonFormatter"} for name in ("generic", "access")}}


def configure_service_logging(level: str, log_format: str = "plain", *, workers: int = 1) -> None:
    """Send the service's own log lines (logger ``sudokupool``) to stderr, unless the host application
    configured logging itself: in uvicorn's style, with each line's pid after the level when there are
    several ``workers`` (each logs for itself), or as JSON."""
    log = logging.getLogger("sudokupool")
    log.setLevel(level.upper())
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        if log_format == "json":
            handler.setFormatter(JsonFormatter())
        else:
            pid = "[%(process)d] " if workers > 1 else ""
            fmt = f"%(levelname)s:%(padding)s{pid}%(message)s"
            handler.setFormatter(logging.Formatter(fmt, defaults={"padding": " "}))
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

    def __init__(
        self, stream: IO[str] | None = None, *, delay: float = 0.5, batch: int = 512, json: bool = False
    ) -> None:
        self.stream = stream
        #: One JSON object a line (SUDOKUPOOL_LOG_FORMAT=json), the message as the plain line's.
        self.json = json
        self.pid = os.getpid()
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
        request = f"{scope['method']} {path} HTTP/{scope['http_version']}"
        if self.json:
            fields = {"time": utc_time(time.time()), "level": "INFO", "pid": self.pid, "logger": "sudokupool.access"}
            line = {**fields, "message": f'{where} - "{request}" {status}', "client": where, "status": status}
            self.lines.append(orjson.dumps(line).decode() + "\n")
        else:
            self.lines.append(f'INFO:     {where} - "{request}" {status}\n')
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


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` (``plural``, by default ``noun`` + ``s``, for any count but 1), with thousands
    separated by commas past 9,999 as elsewhere in the reports."""
    number = f"{count:,}" if count > 9999 else str(count)
    return f"{number} {noun if count == 1 else plural or noun + 's'}"
