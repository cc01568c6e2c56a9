from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import pytest

from sudokupool.app import create_app
from sudokupool.config import (
    SETTINGS,
    BadLineLimit,
    Settings,
    SettingsError,
    listen_port,
    markdown_table,
    unknown_variables,
)
from tests.helpers import free_port
from tests.servers import command, run_server

OPERATIONS = Path(__file__).resolve().parents[1] / "docs" / "operations.md"


def test_defaults_come_from_the_settings_table() -> None:
    assert Settings.from_environ({}) == Settings()
    assert {f.name for f in dataclasses.fields(Settings)} == {s.name for s in SETTINGS}


def test_values_are_parsed_from_prefixed_variables() -> None:
    settings = Settings.from_environ(
        {"SUDOKUPOOL_LIMIT_ANONYMOUS": "5", "SUDOKUPOOL_SYNC_INTERVAL": "0", "LIMIT_ANONYMOUS": "7"}
    )
    assert settings.limit_anonymous == 5
    assert settings.sync_interval == 0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        pytest.param("SUDOKUPOOL_PORT", "eighty", id="not-a-number"),
        pytest.param("SUDOKUPOOL_LIMIT_KEYED", "0", id="below-minimum"),
        pytest.param("SUDOKUPOOL_LOG_LEVEL", "loud", id="not-a-choice"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_environ({name: value})


def test_unknown_prefixed_variables_are_named_with_the_closest_setting() -> None:
    environ = {
        "SUDOKUPOOL_LIMT_ANONYMOUS": "5",
        "SUDOKUPOOL_REDIS_URI": "redis://cache",
        "SUDOKUPOOL_ZZZ": "1",
        "sudokupool_port": "9000",
        "SUDOKUPOOL_PORT": "9000",
        "LIMIT_ANONYMOUS": "7",
    }
    assert unknown_variables(environ) == [
        ("SUDOKUPOOL_LIMT_ANONYMOUS", "SUDOKUPOOL_LIMIT_ANONYMOUS"),
        ("SUDOKUPOOL_REDIS_URI", "SUDOKUPOOL_REDIS_URL"),
        ("SUDOKUPOOL_ZZZ", None),
        ("sudokupool_port", "SUDOKUPOOL_PORT"),
    ]
    assert unknown_variables({setting.env: setting.default for setting in SETTINGS}) == []


def test_the_operations_doc_lists_every_setting() -> None:
    assert markdown_table() in OPERATIONS.read_text()


@pytest.mark.parametrize(
    ("text", "most_good", "certain"),
    [
        pytest.param("10", 1000, 10, id="count"),
        pytest.param("0.1%", 999_000, 1000, id="share"),
        pytest.param("0.1%", 999_001, 1000, id="share-rounded-down"),
        pytest.param("50%", 7, 7, id="half"),
        pytest.param("0%", 10**9, 0, id="none"),
    ],
)
def test_the_bad_lines_past_which_an_export_cannot_be_served(text: str, most_good: int, certain: int) -> None:
    limit = BadLineLimit.parse(text)
    assert limit.certain(most_good) == certain
    # One more bad line is refused even with every good line the export could hold; this many is not.
    bad = certain + 1
    assert not limit.allows(bad, most_good + bad)
    assert limit.allows(certain, most_good + certain)


def test_max_bad_lines_takes_a_count_or_a_percentage() -> None:
    assert Settings.from_environ({}).max_bad_lines == BadLineLimit(None, 0.001)
    assert Settings.from_environ({"SUDOKUPOOL_MAX_BAD_LINES": " 25 "}).max_bad_lines == BadLineLimit(25)
    assert str(Settings.from_environ({"SUDOKUPOOL_MAX_BAD_LINES": "2.5%"}).max_bad_lines) == "2.5%"
    for bad in ("-1", "lots", "150%", "1.5"):
        with pytest.raises(SettingsError, match="SUDOKUPOOL_MAX_BAD_LINES"):
            Settings.from_environ({"SUDOKUPOOL_MAX_BAD_LINES": bad})


@pytest.mark.parametrize(
    ("environ", "line"),
    [
        pytest.param(
            {"SUDOKUPOOL_LIMIT_PRO": "x"},
            "SUDOKUPOOL_LIMIT_PRO='x' is not a whole number; expected a whole number from 1 to 1000000000",
            id="int-not-a-number",
        ),
        pytest.param(
            {"SUDOKUPOOL_PORT": "99999"},
            "SUDOKUPOOL_PORT='99999' is out of range; expected a port number, a whole number from 1 to 65535",
            id="port-too-large",
        ),
        pytest.param(
            {"SUDOKUPOOL_PORT": "0"},
            "SUDOKUPOOL_PORT='0' is out of range; expected a port number, a whole number from 1 to 65535",
            id="port-zero",
        ),
        pytest.param(
            {"SUDOKUPOOL_SYNC_NICENESS": "20"},
            "SUDOKUPOOL_SYNC_NICENESS='20' is out of range; expected a whole number from 0 to 19",
            id="niceness-above-19",
        ),
        pytest.param(
            {"SUDOKUPOOL_REDIS_TIMEOUT": "fast"},
            "SUDOKUPOOL_REDIS_TIMEOUT='fast' is not a number; expected a number from 0.001 to 60",
            id="float-not-a-number",
        ),
        pytest.param(
            {"SUDOKUPOOL_SYNC_INTERVAL": "inf"},
            "SUDOKUPOOL_SYNC_INTERVAL='inf' is not a finite number; expected 0 (off), or a number from 1 to 86400",
            id="float-infinite",
        ),
        pytest.param(
            {"SUDOKUPOOL_SYNC_INTERVAL": "1e-7"},
            "SUDOKUPOOL_SYNC_INTERVAL='1e-7' is out of range; expected 0 (off), or a number from 1 to 86400",
            id="sync-interval-below-a-second",
        ),
        pytest.param(
            {"SUDOKUPOOL_MAX_RECORD_BYTES": str(2**63)},
            f"SUDOKUPOOL_MAX_RECORD_BYTES='{2**63}' is out of range; expected a whole number from 1024 to 1073741824",
            id="record-bytes-past-a-gib",
        ),
        pytest.param(
            {"SUDOKUPOOL_MAX_EXPORT_BYTES": str(2**63)},
            f"SUDOKUPOOL_MAX_EXPORT_BYTES='{2**63}' is out of range; expected a whole number from 1024 to {2**40}",
            id="export-bytes-past-a-tib",
        ),
        pytest.param(
            {"SUDOKUPOOL_CACHE_MAX_AGE": "31536001"},
            "SUDOKUPOOL_CACHE_MAX_AGE='31536001' is out of range; expected a whole number from 0 to 31536000",
            id="max-age-past-a-year",
        ),
        pytest.param(
            {"SUDOKUPOOL_SHUTDOWN_TIMEOUT": "1e300"},
            "SUDOKUPOOL_SHUTDOWN_TIMEOUT='1e300' is out of range; expected a number from 0.1 to 3600",
            id="float-past-its-maximum",
        ),
        pytest.param(
            {"SUDOKUPOOL_LOG_LEVEL": "loud"},
            "SUDOKUPOOL_LOG_LEVEL='loud' is not allowed; expected one of debug, info, warning, error",
            id="not-a-choice",
        ),
        pytest.param(
            {"SUDOKUPOOL_EXPORTS": "s3:///prefix/"},
            "SUDOKUPOOL_EXPORTS='s3:///prefix/' has no bucket name; expected s3://bucket/prefix/",
            id="s3-url-without-bucket",
        ),
        pytest.param(
            {"SUDOKUPOOL_FALLBACK_EXPORTS": "s3://bucket/"},
            "SUDOKUPOOL_FALLBACK_EXPORTS='s3://bucket/' is not a local path",
            id="fallback-not-local",
        ),
        pytest.param(
            {"SUDOKUPOOL_S3_ENDPOINT_URL": "localhost:8333"},
            "SUDOKUPOOL_S3_ENDPOINT_URL='localhost:8333' is not an http(s) URL; expected https://host[:port], or empty",
            id="endpoint-without-scheme",
        ),
        pytest.param(
            {"SUDOKUPOOL_S3_ENDPOINT_URL": "http://localhost:abc"},
            "SUDOKUPOOL_S3_ENDPOINT_URL='http://localhost:abc' has a bad host or port; expected https://host[:port]",
            id="endpoint-bad-port",
        ),
        pytest.param(
            {"SUDOKUPOOL_S3_ENDPOINT_URL": "https://"},
            "SUDOKUPOOL_S3_ENDPOINT_URL='https://' has no host; expected https://host[:port]",
            id="endpoint-without-host",
        ),
        pytest.param(
            {"SUDOKUPOOL_S3_REGION": "bad region!"},
            "SUDOKUPOOL_S3_REGION='bad region!' is not a region name",
            id="region",
        ),
    ],
)
def test_a_bad_value_is_one_line_in_plain_words(environ: dict[str, str], line: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_environ(environ)
    message = str(caught.value)
    assert message.startswith(line)
    assert "\n" not in message
    assert "invalid literal" not in message


@pytest.mark.parametrize(
    ("sync", "work", "runs"),
    [("10", "10", 9), ("16", "15", 14), ("5", "0", 0), ("10", "1", 0)],
)
def test_a_live_reload_never_runs_at_the_work_processes_priority_or_nicer(sync: str, work: str, runs: int) -> None:
    settings = Settings.from_environ({"SUDOKUPOOL_SYNC_NICENESS": sync, "SUDOKUPOOL_WORK_NICENESS": work})
    assert (settings.sync_niceness, settings.work_niceness) == (runs, int(work))


@pytest.mark.parametrize(("sync", "work"), [(None, None), ("0", "0"), ("0", "1"), ("18", "19"), ("3", None)])
def test_a_live_reload_below_the_work_processes_keeps_its_niceness(sync: str | None, work: str | None) -> None:
    environ = {name: value for name, value in [("SUDOKUPOOL_SYNC_NICENESS", sync), ("SUDOKUPOOL_WORK_NICENESS", work)]}
    settings = Settings.from_environ({k: v for k, v in environ.items() if v is not None})
    assert (settings.sync_niceness, settings.work_niceness) == (
        Settings.sync_niceness if sync is None else int(sync),
        Settings.work_niceness if work is None else int(work),
    )
    assert settings.sync_niceness < settings.work_niceness or settings.sync_niceness == settings.work_niceness == 0


def test_a_redis_url_is_never_repeated_in_the_error() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_environ({"SUDOKUPOOL_REDIS_URL": "http://user:hunter2@redis.example:6379"})
    assert str(caught.value) == (
        "SUDOKUPOOL_REDIS_URL is not a Redis URL; "
        "expected redis://host:port/db, rediss://... or unix:///path/to/socket, or empty"
    )


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("redis://:hunter2@localhost:abc", id="port-not-a-number"),
        pytest.param("redis://:hunter2@localhost:99999", id="port-out-of-range"),
        pytest.param("redis://:hunter2@[::1", id="unclosed-ipv6"),
    ],
)
def test_a_malformed_redis_url_is_refused_without_repeating_it(url: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_environ({"SUDOKUPOOL_REDIS_URL": url})
    assert str(caught.value).startswith("SUDOKUPOOL_REDIS_URL is not a valid Redis URL (check the host, port")
    assert "hunter2" not in str(caught.value)


def test_a_long_value_is_cut_short_in_the_error() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_environ({"SUDOKUPOOL_LIMIT_KEYED": "9" * 5000 + "x"})
    assert len(str(caught.value)) < 200
    assert "(5001 characters)" in str(caught.value)


@pytest.mark.parametrize(
    ("environ", "port"),
    [
        pytest.param({}, 8000, id="default"),
        pytest.param({"SUDOKUPOOL_PORT": "9000"}, 9000, id="setting"),
        pytest.param({"SUDOKUPOOL_PORT": "9000", "PORT": "5000"}, 5000, id="paas-port-wins"),
        pytest.param({"PORT": ""}, 8000, id="empty-port-ignored"),
    ],
)
def test_listen_port(environ: dict[str, str], port: int) -> None:
    assert listen_port(environ, Settings.from_environ(environ)) == port


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param("abc", "PORT='abc' is not a whole number", id="not-a-number"),
        pytest.param("70000", "PORT='70000' is out of range", id="too-large"),
    ],
)
def test_a_bad_paas_port_names_port(value: str, problem: str) -> None:
    with pytest.raises(SettingsError, match=f"^{problem}; expected a port number, a whole number from 1 to 65535$"):
        listen_port({"PORT": value}, Settings())


# -- every entry point, as a subprocess: one line on stderr, exit status 2, no traceback ---------------------

MISTAKES = [
    pytest.param({"SUDOKUPOOL_API_KEYS": "notahash"}, "SUDOKUPOOL_API_KEYS entry 1: not a SHA-256", id="api-keys"),
    pytest.param(
        {"SUDOKUPOOL_API_KEYS_FILE": "/missing/keys"},
        "SUDOKUPOOL_API_KEYS_FILE='/missing/keys' cannot be read (no such file or directory)",
        id="api-keys-file",
    ),
    pytest.param({"SUDOKUPOOL_LIMIT_PRO": "x"}, "SUDOKUPOOL_LIMIT_PRO='x' is not a whole number", id="limit"),
    pytest.param({"SUDOKUPOOL_PORT": "99999"}, "SUDOKUPOOL_PORT='99999' is out of range", id="setting-port"),
    pytest.param({"PORT": "abc"}, "PORT='abc' is not a whole number", id="paas-port"),
    pytest.param({"PORT": "99999"}, "PORT='99999' is out of range", id="paas-port-range"),
    pytest.param({"SUDOKUPOOL_REDIS_URL": "localhost"}, "SUDOKUPOOL_REDIS_URL is not a Redis URL", id="redis-url"),
    pytest.param({"SUDOKUPOOL_EXPORTS": "https://x/"}, "SUDOKUPOOL_EXPORTS='https://x/' is not an s3:// URL", id="url"),
    pytest.param(
        {"SUDOKUPOOL_EXPORTS": "S3://b/x/"}, "SUDOKUPOOL_EXPORTS='S3://b/x/' is not an s3:// URL", id="s3-case"
    ),
    pytest.param(
        {"SUDOKUPOOL_EXPORTS": "s3://a_b!/x/"},
        "SUDOKUPOOL_EXPORTS='s3://a_b!/x/' holds a bucket name S3 cannot take; expected s3://",
        id="bucket-name",
    ),
    pytest.param({"SUDOKUPOOL_HOST": " "}, "SUDOKUPOOL_HOST=' ' is empty; expected an address", id="empty-host"),
]


FACTORY = "factory"
SERVE = "serve"
SETTINGS_COMMAND = "settings"
ENTRY_POINTS = (FACTORY, SERVE, SETTINGS_COMMAND)


def entry_point_argv(entry: str) -> list[str]:
    if entry == FACTORY:
        # The Procfile's command line hands uvicorn a port of its own; PORT only reaches the factory.
        return command(free_port())
    return [sys.executable, "-m", "sudokupool", entry]


def run_entry_point(argv: list[str], environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDOKUPOOL_") and k != "PORT"}
    return subprocess.run(argv, env={**env, **environ}, capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def refusals() -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """Every entry point run with every mistake, a few at a time: each run is mostly Python's start-up."""
    runs = [(entry, cast(dict[str, str], param.values[0])) for entry in ENTRY_POINTS for param in MISTAKES]
    with ThreadPoolExecutor(max_workers=4) as workers:
        results = workers.map(lambda run: run_entry_point(entry_point_argv(run[0]), run[1]), runs)
        return {(entry, repr(environ)): result for (entry, environ), result in zip(runs, results, strict=True)}


def assert_one_line(result: subprocess.CompletedProcess[str], problem: str, prefix: str = "sudokupool") -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{prefix}: {problem}")


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(("environ", "problem"), MISTAKES)
def test_an_entry_point_refuses_a_bad_setting_in_one_line(
    refusals: dict[tuple[str, str], subprocess.CompletedProcess[str]], entry: str, environ: dict[str, str], problem: str
) -> None:
    assert_one_line(refusals[(entry, repr(environ))], problem)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        pytest.param(["keys", "check"], "sudokupool", id="keys-check"),
        pytest.param(["check", "{export}"], "sudokupool check", id="check"),
        pytest.param(["pack", "{export}"], "sudokupool pack", id="pack"),
    ],
)
def test_other_commands_refuse_a_bad_setting(tmp_path: Path, command: list[str], prefix: str) -> None:
    export = tmp_path / "pool-20260101T000000Z.ndjson"
    export.write_text("")
    argv = [sys.executable, "-m", "sudokupool", *(part.format(export=export) for part in command)]
    result = run_entry_point(argv, {"SUDOKUPOOL_MAX_BAD_LINES": "1.5"})
    assert_one_line(result, "SUDOKUPOOL_MAX_BAD_LINES='1.5'", prefix)


@pytest.mark.slow
def test_the_settings_command_shows_the_values_in_effect_and_hides_secrets() -> None:
    environ = {"SUDOKUPOOL_PORT": "9000", "SUDOKUPOOL_REDIS_URL": "redis://:hunter2@cache:6379/0"}
    result = run_entry_point([sys.executable, "-m", "sudokupool", "settings"], environ)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "SUDOKUPOOL_PORT=9000    (from the environment; default: 8000)" in lines
    assert "SUDOKUPOOL_REDIS_URL=(set, not shown)    (from the environment; default: empty)" in lines
    assert "SUDOKUPOOL_HOST=127.0.0.1" in lines
    assert "hunter2" not in result.stdout


@pytest.mark.slow
def test_the_settings_command_names_unknown_variables_and_accepts_them() -> None:
    environ = {"SUDOKUPOOL_LIMT_ANONYMOUS": "hunter2", "SUDOKUPOOL_PORT": "9000"}
    result = run_entry_point([sys.executable, "-m", "sudokupool", "settings"], environ)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    at = lines.index("SUDOKUPOOL_LIMT_ANONYMOUS (did you mean SUDOKUPOOL_LIMIT_ANONYMOUS?)")
    assert lines[at + 1] == "    unknown: not a setting, ignored"
    assert "SUDOKUPOOL_LIMIT_ANONYMOUS=60" in lines
    assert "hunter2" not in result.stdout


@pytest.mark.slow
def test_serve_warns_of_unknown_variables_in_one_line_and_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in os.environ:
        if name.upper().startswith("SUDOKUPOOL_"):
            monkeypatch.delenv(name)
    environ = {"SUDOKUPOOL_LIMT_ANONYMOUS": "hunter2", "SUDOKUPOOL_REDIS_URI": "redis://cache"}
    with run_server(environ, tmp_path / "server.log") as server:
        log = server.output()
    named = [line for line in log.splitlines() if "SUDOKUPOOL_LIMT_ANONYMOUS" in line]
    assert named == [
        "WARNING:  unknown SUDOKUPOOL_* variables, ignored: "
        "SUDOKUPOOL_LIMT_ANONYMOUS (did you mean SUDOKUPOOL_LIMIT_ANONYMOUS?), "
        "SUDOKUPOOL_REDIS_URI (did you mean SUDOKUPOOL_REDIS_URL?)"
    ]
    assert "hunter2" not in log


def test_create_app_with_given_settings_raises() -> None:
    with pytest.raises(SettingsError, match="SUDOKUPOOL_API_KEYS entry 1"):
        create_app(Settings(api_keys="notahash"))


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        pytest.param("SUDOKUPOOL_SYNC_INTERVAL", "1e-7", "0 (off), or a number from 1 to 86400", id="sync-interval"),
        pytest.param("SUDOKUPOOL_MAX_RECORD_BYTES", str(2**63), "a whole number from 1024 to 1073741824", id="record"),
        pytest.param("SUDOKUPOOL_CACHE_MAX_AGE", "1000000000", "a whole number from 0 to 31536000", id="max-age"),
        pytest.param("WEB_CONCURRENCY", "65", "a whole number from 1 to 64", id="workers"),
    ],
)
def test_settings_and_serve_refuse_a_value_past_its_bound_alike(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, value: str, expected: str
) -> None:
    from sudokupool.cli import main

    monkeypatch.setenv(name, value)
    line = f"sudokupool: {name}={value!r} is out of range; expected {expected}"
    assert main(["settings"]) == 2
    assert capsys.readouterr().err.startswith(line)
    # serve stops at the same check, before any server or pool.
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.startswith(line)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(v, id=v or "empty")
        for v in ("", "CC0-1.0", "CC-BY-4.0", "ODbL-1.0", "MIT OR Apache-2.0", "(MIT AND CC-BY-4.0)")
    ],
)
def test_the_export_licence_takes_spdx_expressions(value: str) -> None:
    assert Settings.from_environ({"SUDOKUPOOL_EXPORT_LICENSE": value}).export_license == value


@pytest.mark.parametrize("value", [pytest.param(v, id=v) for v in ("public domain", "<script>", "MIT OR", "(MIT")])
def test_the_export_licence_refuses_other_text(value: str) -> None:
    with pytest.raises(SettingsError, match="SUDOKUPOOL_EXPORT_LICENSE"):
        Settings.from_environ({"SUDOKUPOOL_EXPORT_LICENSE": value})


@pytest.mark.parametrize("value", ["0", "3601", "x"])
def test_a_presigned_url_lasts_at_most_an_hour(value: str) -> None:
    with pytest.raises(SettingsError, match="SUDOKUPOOL_EXPORT_URL_SECONDS"):
        Settings.from_environ({"SUDOKUPOOL_EXPORT_URL_SECONDS": value})
