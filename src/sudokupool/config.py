"""Settings: every ``SUDOKUPOOL_*`` environment variable, with its default and help text.

The table :data:`SETTINGS` is the single source: :meth:`Settings.from_environ` reads it, and the
settings table of docs/operations.md is generated from it (``sudokupool settings --markdown``) and
checked against it by the tests. Nothing here reads the environment at import time.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple
from urllib.parse import urlsplit

PREFIX = "SUDOKUPOOL_"

#: The demo pool shipped with the repository (``snapshots/`` beside ``src/``).
BUNDLED_SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots"


class SettingsError(ValueError):
    """A setting has a value the service cannot use; the message names the variable."""


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    help: str
    #: Text -> value; raises ValueError whose message says what is wrong and what is allowed, in words
    #: that follow the variable and its value ("is not a whole number; expected ...").
    parse: Callable[[str], Any]
    #: Never repeat the value in an error (it may hold a password).
    secret: bool = False

    @property
    def env(self) -> str:
        return PREFIX + self.name.upper()


def _whole(text: str, expected: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"is not a whole number; expected {expected}") from None


def bounded_int(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """A parser of whole numbers from ``minimum`` up to ``maximum`` (no bound when None), for :func:`parse_value`."""
    expected = (
        f"a whole number of at least {minimum}" if maximum is None else f"a whole number from {minimum} to {maximum}"
    )

    def parse(text: str) -> int:
        value = _whole(text, expected)
        if value < minimum or (maximum is not None and value > maximum):
            raise ValueError(f"is out of range; expected {expected}")
        return value

    return parse


_PORT_EXPECTED = "a port number, a whole number from 1 to 65535"


def parse_port(text: str) -> int:
    """A TCP port, 1-65535 (0 would bind a random port, and larger numbers wrap around in the OS call)."""
    value = _whole(text, _PORT_EXPECTED)
    if not 1 <= value <= 65535:
        raise ValueError(f"is out of range; expected {_PORT_EXPECTED}")
    return value


def _float(minimum: float, maximum: float, *, off: bool = False) -> Callable[[str], float]:
    """A parser of numbers from ``minimum`` to ``maximum``; with ``off``, 0 too (what turns a feature off)."""
    expected = f"a number from {minimum:g} to {maximum:g} (decimals allowed, such as 2.5)"
    if off:
        expected = f"0 (off), or {expected}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"is not a number; expected {expected}") from None
        if not math.isfinite(value):
            raise ValueError(f"is not a finite number; expected {expected}")
        if not (minimum <= value <= maximum or (off and value == 0)):
            raise ValueError(f"is out of range; expected {expected}")
        return value

    return parse


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            raise ValueError(f"is not allowed; expected one of {', '.join(choices)}")
        return value

    return parse


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("on", "off"):
        raise ValueError("must be on or off")
    return value == "on"


def _text(text: str) -> str:
    return text.strip()


#: An SPDX licence expression: identifiers (``CC0-1.0``, ``LicenseRef-x``, ``GPL-2.0+``) joined by AND, OR or
#: WITH, with brackets.
_SPDX_ID: Final = r"\(*[A-Za-z0-9][A-Za-z0-9.+-]*\)*"
_SPDX: Final = re.compile(rf"{_SPDX_ID}(?: (?:AND|OR|WITH) {_SPDX_ID})*")


def _licence(text: str) -> str:
    value = text.strip()
    if value and (len(value) > 200 or not _SPDX.fullmatch(value) or value.count("(") != value.count(")")):
        raise ValueError("is not an SPDX licence expression such as CC0-1.0, CC-BY-4.0 or ODbL-1.0")
    return value


def _host(text: str) -> str:
    value = text.strip()
    if not value:
        raise ValueError(
            "is empty; expected an address to bind, such as 127.0.0.1 (this machine) or 0.0.0.0 (every interface)"
        )
    return value


def _optional_port(text: str) -> int | None:
    text = text.strip()
    return parse_port(text) if text else None


class BadLineLimit(NamedTuple):
    """How many bad lines an export may hold and still be served: a count (``10``) or a share of its
    non-blank lines (``0.1%``). Parse with :meth:`parse`."""

    lines: int | None = None
    share: float = 0.0

    @classmethod
    def parse(cls, text: str) -> BadLineLimit:
        value = text.strip()
        try:
            if value.endswith("%"):
                percent = float(value[:-1])
                if not 0 <= percent <= 100:
                    raise ValueError
                return cls(None, percent / 100)
            count = int(value)
            if count < 0:
                raise ValueError
            return cls(count)
        except ValueError:
            raise ValueError(
                "is not a count or a percentage; expected a count of lines such as 10, or a percentage of them "
                "from 0% to 100% such as 0.1%"
            ) from None

    def allows(self, bad: int, lines: int) -> bool:
        """Whether ``bad`` bad lines out of ``lines`` non-blank lines are within the limit."""
        if self.lines is not None:
            return bad <= self.lines
        return bad <= self.share * lines

    def certain(self, most_good: int) -> int:
        """How many bad lines an export that can hold at most ``most_good`` good lines may show before it is
        refused whatever the rest holds: past this, ``allows`` is false for every possible rest.

        With a share ``s``, ``bad > s * (good + bad)`` holds for every ``good <= most_good`` exactly when
        ``bad > s * most_good / (1 - s)``.
        """
        if self.lines is not None:
            return self.lines
        if self.share >= 1:
            return 1 << 62
        certain = int(self.share * most_good / (1 - self.share))
        while self.allows(certain + 1, most_good + certain + 1):  # where rounding fell short
            certain += 1
        return certain

    def __str__(self) -> str:
        return str(self.lines) if self.lines is not None else f"{self.share * 100:g}%"


#: The default of ``SUDOKUPOOL_MAX_BAD_LINES``: one line in a thousand.
STRICT_BAD_LINES = BadLineLimit(None, 0.001)


def _bad_lines(text: str) -> BadLineLimit:
    return BadLineLimit.parse(text)


@dataclass(frozen=True)
class S3Location:
    """A bucket and a key prefix (empty, or ending in ``/``)."""

    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


#: What botocore lets through as a bucket name (S3 itself is stricter; R2 and MinIO differ a little).
_BUCKET: Final = re.compile(r"[A-Za-z0-9._-]{1,255}")


class S3UrlError(ValueError):
    """An unusable ``s3://`` URL. ``reason`` says why in words that follow the URL; the message adds the URL
    and what is expected."""

    def __init__(self, url: str, reason: str, expected: str) -> None:
        super().__init__(f"{url!r} {reason} ({expected})" if expected else f"{url!r} {reason}")
        self.reason = reason


def parse_s3_url(url: str) -> S3Location:
    """Split ``s3://bucket/prefix/`` into bucket and prefix; raise :class:`S3UrlError` on anything else.

    A prefix without a trailing slash gets one: exports are listed as the direct children of the prefix.
    """
    if not url.startswith("s3://"):
        raise S3UrlError(url, "is not an s3:// URL", "")
    bucket, _, prefix = url[len("s3://") :].partition("/")
    if not bucket:
        raise S3UrlError(url, "has no bucket name", "expected s3://bucket/prefix/")
    if not _BUCKET.fullmatch(bucket):
        raise S3UrlError(url, "holds a bucket name S3 cannot take", "letters, digits, '.', '-' and '_' only")
    prefix = prefix.lstrip("/")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return S3Location(bucket, prefix)


def _exports(text: str) -> str:
    value = text.strip()
    if value.startswith("s3://"):
        try:
            parse_s3_url(value)
        except S3UrlError as exc:
            raise ValueError(f"{exc.reason}; expected s3://bucket/prefix/, a directory or an export file") from None
    elif "://" in value or value.lower().startswith("s3:"):
        raise ValueError("is not an s3:// URL; expected s3://bucket/prefix/, a directory or an export file")
    return value


def _local_path(text: str) -> str:
    value = text.strip()
    if "://" in value:
        raise ValueError("is not a local path; expected a local directory or export file (or empty)")
    return value


_REDIS_EXPECTED = "redis://host:port/db, rediss://... or unix:///path/to/socket"


def _redis_url(text: str) -> str:
    value = _url("a Redis", "redis", "rediss", "unix", expected=_REDIS_EXPECTED)(text)
    if value:
        # Imported here: only a deployment with Redis needs redis-py. Its own message is not repeated:
        # it can quote parts of the URL, password included.
        from redis.connection import parse_url

        try:
            parse_url(value)  # type: ignore[no-untyped-call]
        except ValueError:
            raise ValueError(
                f"is not a valid Redis URL (check the host, port and database number); expected {_REDIS_EXPECTED}"
            ) from None
    return value


# The form botocore accepts for a region name.
_REGION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?")


def _region(text: str) -> str:
    value = text.strip()
    if value and not _REGION.fullmatch(value):
        raise ValueError("is not a region name; expected letters, digits and dashes such as eu-west-1, or empty")
    return value


def _url(kind: str, *schemes: str, expected: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip()
        if value and not value.lower().startswith(tuple(f"{scheme}://" for scheme in schemes)):
            raise ValueError(f"is not {kind} URL; expected {expected}, or empty")
        if value.lower().startswith(("http://", "https://")):
            try:
                parts = urlsplit(value)
                parts.port  # noqa: B018 (raises ValueError for a port that is not 0-65535)
            except ValueError:
                raise ValueError(f"has a bad host or port; expected {expected}, or empty") from None
            if not parts.hostname:
                raise ValueError(f"has no host; expected {expected}, or empty")
        return value

    return parse


# The bounds of the settings, each what the setting can sensibly be: past them a value is a mistake (a unit
# confused, a digit too many) whose harm is out of proportion, such as a worker listing storage without pause,
# or a size that overflows the C calls it reaches.
_DAY: Final = 86400.0
_GIB: Final = 1 << 30
_TIB: Final = 1 << 40
#: ``Cache-Control: max-age`` past a year is not meaningful (RFC 9111 leaves it to caches; RFC 2616 said no more).
MAX_CACHE_AGE: Final = 365 * 86400
#: Most ``WEB_CONCURRENCY`` workers: one a core on a 64-core machine; past that, run more instances.
MAX_WORKERS: Final = 64


def parse_workers(text: str) -> int:
    """``WEB_CONCURRENCY``: 1 to :data:`MAX_WORKERS` worker processes."""
    return bounded_int(1, MAX_WORKERS)(text)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "exports",
        "",
        "Where pool exports live: a directory (its latest `pool-*.ndjson[.gz]` is loaded), one such file, "
        "or `s3://bucket/prefix/`. Empty means the bundled demo pool in `snapshots/`.",
        _exports,
    ),
    Setting(
        "fallback_exports",
        "",
        "A local directory or file to load when object storage stays unreachable at startup. Empty: no fallback.",
        _local_path,
    ),
    Setting("host", "127.0.0.1", "Address `sudokupool serve` binds (use 0.0.0.0 in containers and PaaS).", _host),
    Setting("port", "8000", "Port `sudokupool serve` binds when `PORT` is not set (1-65535).", parse_port),
    Setting(
        "server",
        "uvicorn",
        "The HTTP server `sudokupool serve` (and so the Procfile) runs: uvicorn or granian (see Servers below).",
        _choice("uvicorn", "granian"),
    ),
    Setting(
        "access_log",
        "off",
        "`on` writes a line per request to stdout (`api_key` values redacted); the platform's router logs "
        "requests already.",
        _switch,
    ),
    Setting(
        "metrics_port",
        "",
        "Port of the Prometheus metrics (`/metrics`, docs/operations.md), never the API's port. Empty: off.",
        _optional_port,
    ),
    Setting(
        "metrics_host",
        "",
        "Address the metrics port binds. Empty: the address the API binds (`--host`, else `SUDOKUPOOL_HOST`).",
        _text,
    ),
    Setting(
        "max_header_bytes",
        "65536",
        "Largest request head (request line and headers) accepted; a larger one is answered 431 (8192-1048576).",
        bounded_int(8192, 1 << 20),
    ),
    Setting(
        "first_request_timeout",
        "10",
        "Seconds a new connection has to send a whole request head, and any request head from its first byte, "
        "before the server closes the connection (0.1-600).",
        _float(0.1, 600),
    ),
    Setting(
        "shutdown_timeout",
        "20",
        "Seconds a shutdown (SIGTERM) waits for requests in flight; then busy connections are closed (0.1-3600).",
        _float(0.1, 3600),
    ),
    Setting(
        "log_level", "info", "Log level: debug, info, warning or error.", _choice("debug", "info", "warning", "error")
    ),
    Setting(
        "log_format",
        "plain",
        "`plain`: uvicorn-style lines. `json`: one JSON object a line (`time`, `level`, `pid`, `logger`, `message`, "
        "and the line's fields), the servers' and the access log's lines too (docs/operations.md).",
        _choice("plain", "json"),
    ),
    Setting(
        "limit_anonymous",
        "60",
        "Requests per minute per client address without a key (`/api/v2` only; 1 to a billion).",
        bounded_int(1, 10**9),
    ),
    Setting(
        "limit_keyed", "600", "Requests per minute per key of the keyed tier (1 to a billion).", bounded_int(1, 10**9)
    ),
    Setting(
        "limit_pro", "6000", "Requests per minute per key of the pro tier (1 to a billion).", bounded_int(1, 10**9)
    ),
    Setting(
        "api_keys",
        "",
        "Comma-separated key entries: `<sha256 hex of the key>` (keyed tier) or `<sha256 hex>:pro`. "
        "Never plain keys; `sudokupool keys new` prints an entry.",
        _text,
    ),
    Setting("api_keys_file", "", "A file with one key entry per line (`#` starts a comment).", _text),
    Setting(
        "trusted_proxy_hops",
        "0",
        "How many proxies in front of the service append to `X-Forwarded-For` (Heroku: 1). "
        "0 means the TCP peer is the client (0-32).",
        bounded_int(0, 32),
    ),
    Setting(
        "redis_url",
        "",
        "Redis URL for limits and activity counters shared by all instances. Empty: per process.",
        _redis_url,
        secret=True,
    ),
    Setting(
        "redis_mode",
        "single",
        "`single`: `SUDOKUPOOL_REDIS_URL` is one Redis server. `cluster`: it is any node of a Redis Cluster, "
        "over whose nodes the counters spread.",
        _choice("single", "cluster"),
    ),
    Setting(
        "redis_timeout",
        "0.25",
        "Seconds a Redis call may take before it counts as failed (0.001-60).",
        _float(0.001, 60),
    ),
    Setting(
        "redis_failure_mode",
        "open",
        "When Redis fails: `open` serves the request, limited per process meanwhile (and logs), `closed` answers 503.",
        _choice("open", "closed"),
    ),
    Setting(
        "activity_flush_seconds",
        "5",
        "With Redis: seconds between sends of this instance's activity counts to the shared counters (0.01-3600).",
        _float(0.01, 3600),
    ),
    Setting(
        "s3_endpoint_url",
        "",
        "S3 endpoint for R2, MinIO, SeaweedFS...; empty for AWS S3.",
        _url("an http(s)", "http", "https", expected="https://host[:port]"),
    ),
    Setting("s3_region", "", "S3 region; empty uses `AWS_REGION`/`AWS_DEFAULT_REGION`, else `us-east-1`.", _region),
    Setting(
        "s3_addressing_style", "auto", "S3 addressing style: auto, path or virtual.", _choice("auto", "path", "virtual")
    ),
    Setting(
        "sync_interval",
        "300",
        "Seconds between checks for a newer export (1-86400); 0 turns live sync off.",
        _float(1, _DAY, off=True),
    ),
    Setting(
        "sync_niceness",
        "10",
        "How many steps nicer than requests a live reload's CPU work runs (0-19, Unix; 0: same priority); at most "
        "one step below `SUDOKUPOOL_WORK_NICENESS` (0 when that is 0), so that a reload never waits behind "
        "computed work.",
        bounded_int(0, 19),
    ),
    Setting(
        "sync_download_rate",
        "16",
        "MiB per second at which a live sync downloads a new export's pack from object storage, one range at "
        "a time, so requests keep their latency; startup downloads at full speed (0-1048576). 0: no limit.",
        bounded_int(0, 1 << 20),
    ),
    Setting(
        "cache_dir",
        "",
        "A local directory for pool packs: the pack of an export from object storage is downloaded here, a "
        "local one copied here (the service maps only files of its own), and an export without a pack gets one "
        "written here, so the next boot maps it and workers on one machine share one copy. It keeps the three "
        "newest packs. Used only when it is the service user's and no other user may write it (made 0700 "
        "when missing). Empty: a temporary file per process.",
        _text,
    ),
    Setting(
        "storage_retry_seconds",
        "30",
        "How long startup retries unreachable storage before giving up (0-86400 seconds).",
        _float(0, _DAY),
    ),
    Setting(
        "max_record_bytes",
        "1048576",
        "Longest export line (one record) that is loaded, in bytes; a longer line is a bad line, skipped "
        "without being held in memory (1 KiB to 1 GiB).",
        bounded_int(1024, _GIB),
    ),
    Setting(
        "max_export_bytes",
        "4294967296",
        "Most bytes an export may inflate to (4 GiB: about 300,000 puzzles with solve paths, 5 million without; "
        "serving them takes more memory than that). A larger export is refused (1 KiB to 1 TiB).",
        bounded_int(1024, _TIB),
    ),
    Setting(
        "max_bad_lines",
        "0.1%",
        "Most bad lines (unparseable, invalid, too long, duplicate ids) an export may hold and still be "
        "served: a count (`10`) or a percentage of its lines (`0.1%`). More, and it is refused.",
        _bad_lines,
    ),
    Setting(
        "exports_list_cache_seconds",
        "60",
        "How long the `pool-exports` listing is cached, 0-86400 seconds (a failed listing is remembered for 5 s).",
        _float(0, _DAY),
    ),
    Setting(
        "exports_list_max",
        "1000",
        "Most export objects `pool-exports` returns (newest first; 1-1000000).",
        bounded_int(1, 10**6),
    ),
    Setting(
        "export_license",
        "",
        (
            "The licence of the exports, an SPDX expression such as `CC0-1.0`, stated in `pool-exports` "
            "(empty: none stated, `null`)."
        ),
        _licence,
    ),
    Setting(
        "export_url_seconds",
        "900",
        "How long the presigned S3 URL a download of an export redirects to stays valid (at most an hour).",
        bounded_int(1, 3600),
    ),
    Setting(
        "image_cache_bytes",
        "12582912",
        "Byte budget of the rendered image cache (LRU; one budget over every format and size; 0 to 1 TiB): what a "
        "flood of distinct images can leave in a worker.",
        bounded_int(0, _TIB),
    ),
    Setting(
        "work_processes",
        "1",
        "Work processes of each serving worker for computed work (renders, print sheets): started at the first "
        "job, at a lower CPU priority, apart from the worker that serves lookups.",
        bounded_int(1, 64),
    ),
    Setting(
        "work_queue",
        "16",
        "Jobs that may wait for a work process (each serving worker); one more is answered 503 with `Retry-After`.",
        bounded_int(0),
    ),
    Setting(
        "work_budget_seconds",
        "10",
        "Seconds a job may run in a work process; a longer one is stopped (its process replaced) and answered 503.",
        _float(0.001, 3600),
    ),
    Setting(
        "work_niceness",
        "15",
        "How many steps nicer than requests the work processes run (0-19, Unix; 0: same priority). Above 0, on "
        "Linux they also run under the SCHED_IDLE policy: a core only when no request or sync wants it.",
        bounded_int(0, 19),
    ),
    Setting(
        "work_process_jobs",
        "100000",
        "Jobs a work process runs before a fresh one replaces it (a guard against leaks: its resident bytes are the "
        "memory bound, and a start costs the cores lookups use).",
        bounded_int(1),
    ),
    Setting(
        "work_process_bytes",
        "134217728",
        "Resident bytes a work process may keep after a job (its heap trimmed); past them a fresh one replaces it.",
        bounded_int(16 << 20),
    ),
    Setting(
        "cost_render",
        "5",
        "Requests an image not in the render cache counts for in the `/api/v2` rate limit (a lookup counts 1).",
        bounded_int(1),
    ),
    Setting(
        "cost_print",
        "10",
        "Requests a print sheet (`/print`) counts for in the client's `/api/v2` rate limit.",
        bounded_int(1),
    ),
    Setting(
        "cost_grade",
        "10",
        "Requests a live grade (`/grids/{grid}` for a grid the pool does not hold, not cached) counts for in the "
        "`/api/v2` rate limit; a grid the pool holds counts 1, as a lookup.",
        bounded_int(1),
    ),
    Setting(
        "cost_hint",
        "5",
        "Requests a hint (`/grids/{grid}/hint`, `/puzzles/{id}/hint`) not cached counts for in the `/api/v2` rate "
        "limit.",
        bounded_int(1),
    ),
    Setting(
        "engine_cache_bytes",
        "16777216",
        "Byte budget of the cache of grid answers and hints (LRU, one for both; emptied when a new export loads).",
        bounded_int(0),
    ),
    Setting(
        "engine_prepared_bytes",
        "16777216",
        "Byte budget of the pool records last sent in another layout (`/grids/{grid}`), kept read and prepared for "
        "moving so that the same record in any other layout is moved by lookups (LRU, each record counted as about the "
        "bytes it holds; 0: none kept, each move reads its record).",
        bounded_int(0),
    ),
    Setting(
        "grid_max_age",
        "86400",
        "`max-age` (seconds) of grid answers and hints: the same grid or board always gives the same bytes while "
        "an export is served.",
        bounded_int(0),
    ),
    Setting(
        "cache_max_age",
        "3600",
        "`Cache-Control: max-age` in seconds for puzzles, solutions, images, the technique catalogue and print "
        "sheets of given codes (0 to a year, 31536000).",
        bounded_int(0, MAX_CACHE_AGE),
    ),
)


@dataclass(frozen=True)
class Settings:
    """All settings, parsed. Build with :meth:`from_environ`; defaults come from :data:`SETTINGS`."""

    exports: str = ""
    fallback_exports: str = ""
    host: str = "127.0.0.1"
    port: int = 8000
    server: str = "uvicorn"
    access_log: bool = False
    metrics_port: int | None = None
    metrics_host: str = ""
    max_header_bytes: int = 65536
    first_request_timeout: float = 10.0
    shutdown_timeout: float = 20.0
    log_level: str = "info"
    log_format: Literal["plain", "json"] | str = "plain"
    limit_anonymous: int = 60
    limit_keyed: int = 600
    limit_pro: int = 6000
    api_keys: str = ""
    api_keys_file: str = ""
    trusted_proxy_hops: int = 0
    redis_url: str = ""
    redis_mode: Literal["single", "cluster"] | str = "single"
    redis_timeout: float = 0.25
    redis_failure_mode: Literal["open", "closed"] | str = "open"
    activity_flush_seconds: float = 5.0
    s3_endpoint_url: str = ""
    s3_region: str = ""
    s3_addressing_style: str = "auto"
    sync_interval: float = 300.0
    sync_niceness: int = 10
    sync_download_rate: int = 16
    cache_dir: str = ""
    storage_retry_seconds: float = 30.0
    max_record_bytes: int = 1 << 20
    max_export_bytes: int = 4 << 30
    max_bad_lines: BadLineLimit = STRICT_BAD_LINES
    exports_list_cache_seconds: float = 60.0
    exports_list_max: int = 1000
    export_license: str = ""
    export_url_seconds: int = 900
    image_cache_bytes: int = 12 * 1024 * 1024
    cache_max_age: int = 3600
    work_processes: int = 1
    work_queue: int = 16
    work_budget_seconds: float = 10.0
    work_niceness: int = 15
    work_process_jobs: int = 100_000
    work_process_bytes: int = 128 << 20
    cost_render: int = 5
    cost_print: int = 10
    cost_grade: int = 10
    cost_hint: int = 5
    engine_cache_bytes: int = 16 * 1024 * 1024
    engine_prepared_bytes: int = 16 * 1024 * 1024
    grid_max_age: int = 86400

    def __post_init__(self) -> None:
        # A live reload's thread at the work processes' priority or below would wait for the cores behind renders:
        # it runs a step less nice than they do at the most (at full priority when they do).
        if self.sync_niceness >= self.work_niceness:
            object.__setattr__(self, "sync_niceness", max(self.work_niceness - 1, 0))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        """Parse every ``SUDOKUPOOL_*`` variable of ``environ``; raise :class:`SettingsError` on a bad value."""
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw = environ.get(setting.env)
            if raw is None:
                raw = setting.default
            values[setting.name] = parse_value(setting.env, raw, setting.parse, secret=setting.secret)
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    @property
    def exports_source(self) -> str:
        """The export source with the default applied."""
        return self.exports or str(BUNDLED_SNAPSHOTS)


def parse_value(env: str, raw: str, parse: Callable[[str], Any], *, secret: bool = False) -> Any:
    """``parse(raw)``; on a bad value raise :class:`SettingsError`, one line naming ``env``.

    The line reads ``SUDOKUPOOL_LIMIT_PRO='x' is not a whole number; expected a whole number of at least 1``.
    """
    try:
        return parse(raw)
    except ValueError as exc:
        shown = "" if secret else f"={_shown(raw)}"
        raise SettingsError(f"{env}{shown} {exc}") from None


def _shown(raw: str) -> str:
    """The value as the error repeats it: quoted, on one line, and cut short when long."""
    if len(raw) <= 60:
        return repr(raw)
    return f"{raw[:60]!r}... ({len(raw)} characters)"


def unknown_variables(environ: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """The ``SUDOKUPOOL_*`` variables of ``environ`` (in any case) that are no setting, each with the setting
    whose name is closest (None when none is close), sorted: a misspelt name is otherwise ignored without
    a word, and the default it meant to change stays in effect."""
    known = {setting.env for setting in SETTINGS}
    # Compared without the prefix, which every name shares and would make any two names look alike.
    suffixes = [setting.env.removeprefix(PREFIX) for setting in SETTINGS]
    unknown = []
    for name in sorted(environ):
        if name.upper().startswith(PREFIX) and name not in known:
            close = difflib.get_close_matches(name.upper().removeprefix(PREFIX), suffixes, n=1)
            unknown.append((name, PREFIX + close[0] if close else None))
    return unknown


def describe_unknown(name: str, closest: str | None) -> str:
    """``SUDOKUPOOL_LIMT_ANONYMOUS (did you mean SUDOKUPOOL_LIMIT_ANONYMOUS?)``; never the value, which may
    be a secret."""
    return f"{name} (did you mean {closest}?)" if closest else name


def web_concurrency(environ: Mapping[str, str]) -> int:
    """The number of server workers, ``WEB_CONCURRENCY`` (set by Procfile platforms; 1 when unset or empty); a bad
    value raises :class:`SettingsError` (one line, exit status 2)."""
    raw = environ.get("WEB_CONCURRENCY")
    if not raw:
        return 1
    workers: int = parse_value("WEB_CONCURRENCY", raw, parse_workers)
    return workers


def listen_port(environ: Mapping[str, str], settings: Settings) -> int:
    """The port ``sudokupool serve`` binds: ``PORT`` (set by PaaS platforms), else ``SUDOKUPOOL_PORT``."""
    raw = environ.get("PORT")
    if not raw:
        return settings.port
    port: int = parse_value("PORT", raw, parse_port)
    return port


def markdown_table() -> str:
    """The settings table of docs/operations.md."""
    lines = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for setting in SETTINGS:
        default = f"`{setting.default}`" if setting.default else "(empty)"
        lines.append(f"| `{setting.env}` | {default} | {setting.help} |")
    return "\n".join(lines)
