from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sudokupool.config import SETTINGS, Settings, SettingsError, markdown_table

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
