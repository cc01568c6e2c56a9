"""Settings: every ``SUDOKUPOOL_*`` environment variable, with its default and help text.

The table :data:`SETTINGS` is the single source: :meth:`Settings.from_environ` reads it, and the
README's settings table is generated from it (``sudokupool settings --markdown``) and checked against
it by the tests. Nothing here reads the environment at import time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
    parse: Callable[[str], Any]

    @property
    def env(self) -> str:
        return PREFIX + self.name.upper()


def _int(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    return parse


def _float(minimum: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = float(text)
        if not value >= minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    return parse


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return value

    return parse


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("on", "off"):
        raise ValueError("must be on or off")
    return value == "on"


def _text(text: str) -> str:
    return text.strip()


def _optional_port(text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    value = int(text)
    if not 1 <= value <= 65535:
        raise ValueError("must be a port number, 1-65535 (empty: off)")
    return value


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "exports",
        "",
        "Where pool exports live: a directory (its latest `pool-*.ndjson[.gz]` is loaded), one export file, "
        "or `s3://bucket/prefix/`. Empty means the bundled demo pool in `snapshots/`.",
        _text,
    ),
    Setting(
        "fallback_exports",
        "",
        "A local directory or file to load when object storage stays unreachable at startup. Empty: no fallback.",
        _text,
    ),
    Setting("host", "127.0.0.1", "Address `sudokupool serve` binds (use 0.0.0.0 in containers and PaaS).", _text),
    Setting("port", "8000", "Port `sudokupool serve` binds when `PORT` is not set.", _int(0)),
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
        "Largest request head (request line and headers) accepted; a larger one is answered 431.",
        _int(8192),
    ),
    Setting(
        "first_request_timeout",
        "10",
        "Seconds a new connection may stay silent before the server closes it.",
        _float(0.1),
    ),
    Setting(
        "shutdown_timeout",
        "20",
        "Seconds a shutdown (SIGTERM) waits for requests in flight; then busy connections are closed.",
        _float(0.1),
    ),
    Setting(
        "log_level", "info", "Log level: debug, info, warning or error.", _choice("debug", "info", "warning", "error")
    ),
    Setting("limit_anonymous", "60", "Requests per minute per client address without a key (`/api/v2` only).", _int(1)),
    Setting("limit_keyed", "600", "Requests per minute per key of the keyed tier.", _int(1)),
    Setting("limit_pro", "6000", "Requests per minute per key of the pro tier.", _int(1)),
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
        "0 means the TCP peer is the client.",
        _int(0),
    ),
    Setting(
        "redis_url",
        "",
        "Redis URL for limits and activity counters shared by all instances. Empty: per process.",
        _text,
    ),
    Setting("redis_timeout", "0.25", "Seconds a Redis call may take before it counts as failed.", _float(0.001)),
    Setting(
        "redis_failure_mode",
        "open",
        "When Redis fails: `open` serves the request, limited per process meanwhile (and logs), `closed` answers 503.",
        _choice("open", "closed"),
    ),
    Setting(
        "activity_flush_seconds",
        "5",
        "With Redis: seconds between sends of this instance's activity counts to the shared counters.",
        _float(0.01),
    ),
    Setting("s3_endpoint_url", "", "S3 endpoint for R2, MinIO, SeaweedFS...; empty for AWS S3.", _text),
    Setting("s3_region", "", "S3 region; empty uses `AWS_REGION`/`AWS_DEFAULT_REGION`, else `us-east-1`.", _text),
    Setting(
        "s3_addressing_style", "auto", "S3 addressing style: auto, path or virtual.", _choice("auto", "path", "virtual")
    ),
    Setting("sync_interval", "300", "Seconds between checks for a newer export; 0 turns live sync off.", _float(0)),
    Setting(
        "sync_niceness",
        "10",
        "How many steps nicer than requests a live reload's CPU work runs (0-19, Unix; 0: same priority).",
        _int(0),
    ),
    Setting("storage_retry_seconds", "30", "How long startup retries unreachable storage before giving up.", _float(0)),
    Setting("exports_list_cache_seconds", "60", "How long the `pool-exports` listing is cached.", _float(0)),
    Setting("exports_list_max", "1000", "Most export objects `pool-exports` returns (newest first).", _int(1)),
    Setting("image_cache_bytes", "67108864", "Byte budget of the rendered PNG cache (LRU).", _int(0)),
    Setting("cache_max_age", "3600", "`Cache-Control: max-age` in seconds for puzzles, solutions and images.", _int(0)),
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
    limit_anonymous: int = 60
    limit_keyed: int = 600
    limit_pro: int = 6000
    api_keys: str = ""
    api_keys_file: str = ""
    trusted_proxy_hops: int = 0
    redis_url: str = ""
    redis_timeout: float = 0.25
    redis_failure_mode: Literal["open", "closed"] | str = "open"
    activity_flush_seconds: float = 5.0
    s3_endpoint_url: str = ""
    s3_region: str = ""
    s3_addressing_style: str = "auto"
    sync_interval: float = 300.0
    sync_niceness: int = 10
    storage_retry_seconds: float = 30.0
    exports_list_cache_seconds: float = 60.0
    exports_list_max: int = 1000
    image_cache_bytes: int = 64 * 1024 * 1024
    cache_max_age: int = 3600

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        """Parse every ``SUDOKUPOOL_*`` variable of ``environ``; raise :class:`SettingsError` on a bad value."""
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw = environ.get(setting.env)
            if raw is None:
                raw = setting.default
            try:
                values[setting.name] = setting.parse(raw)
            except ValueError as exc:
                raise SettingsError(f"{setting.env}={raw!r}: {exc}") from None
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    @property
    def exports_source(self) -> str:
        """The export source with the default applied."""
        return self.exports or str(BUNDLED_SNAPSHOTS)


def markdown_table() -> str:
    """The README's settings table."""
    lines = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for setting in SETTINGS:
        default = f"`{setting.default}`" if setting.default else "(empty)"
        lines.append(f"| `{setting.env}` | {default} | {setting.help} |")
    return "\n".join(lines)
