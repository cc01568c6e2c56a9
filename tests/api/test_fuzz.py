"""Fuzz the live server with requests generated from its own OpenAPI document (schemathesis).

Every operation gets generated parameters (ids, difficulties, variants, keys in the header and the
query); each answer must be documented: its status, content type, headers and body schema, and no 5xx.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from sudokupool.api.routes import document
from tests.servers import run_server

# Each test here starts the service (or drives one started for the module) as the Procfile does.
pytestmark = pytest.mark.slow

schema = schemathesis.openapi.from_dict(document())
#: The keys of an OpenAPI path item that are operations.
VERBS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("fuzz") / "server.log"
    # The demo pool; limits high enough that generated traffic is never answered 429 instead.
    env = {"SUDOKUPOOL_LIMIT_ANONYMOUS": "1000000", "SUDOKUPOOL_REDIS_URL": "", "SUDOKUPOOL_SYNC_INTERVAL": "0"}
    with run_server(env, log) as server:
        yield server.url
    assert "Traceback" not in Path(log).read_text()


@schema.parametrize()
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_live_server_answers_as_its_document_says(case: schemathesis.Case[Any], live_url: str) -> None:
    low, high = _number(case.query, "min_score"), _number(case.query, "max_score")
    fewest, most = _number(case.query, "min_clues"), _number(case.query, "max_clues")
    query = case.query or {}
    # OpenAPI 3.0 cannot say that one parameter must not exceed another (min_score above max_score, min_clues
    # above max_clues), that one needs another (offset needs seed), that a string names a time zone (tz), or
    # that a span of dates is at most 31 days up to today (the archive): 400s the document describes in words,
    # so those requests are not held to "schema-valid data is accepted".
    crossed = (
        (low is not None and high is not None and low > high)
        or (fewest is not None and most is not None and fewest > most)
        or ("offset" in query and "seed" not in query)
        or "tz" in query
        or "from" in query
        or "to" in query
    )
    case.call_and_validate(base_url=live_url, excluded_checks=[positive_data_acceptance] if crossed else None)


def _number(query: Any, name: str) -> int | None:
    """A query parameter as schemathesis generated it (an integer, or its text), else None."""
    try:
        return int((query or {})[name])
    except (KeyError, TypeError, ValueError):
        return None


def test_every_operation_of_the_document_is_fuzzed_under_an_id_of_its_own() -> None:
    # pytest-xdist runs tests by node id: operations that shared one id would run as one, the rest never fuzzed.
    # A collection of its own (in a child pytest) sees every fuzz test whatever ``-k`` or ``-m`` this run was given.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            f"{__file__}::test_the_live_server_answers_as_its_document_says",
        ],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line.split("::", 1)[1] for line in done.stdout.splitlines() if "::" in line]
    operations = {
        f"{verb.upper()} {path}" for path, item in document()["paths"].items() for verb in item if verb in VERBS
    }

    assert len(ids) == len(set(ids)) == len(operations)
    assert set(ids) == {f"test_the_live_server_answers_as_its_document_says[{label}]" for label in operations}
