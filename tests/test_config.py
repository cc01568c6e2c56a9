from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sudokupool.config import SETTINGS, BadLineLimit, Settings, SettingsError, markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"


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


def test_the_readme_lists_every_setting() -> None:
    assert markdown_table() in README.read_text()


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
