"""tests/conftest.py: a run with tests that share a node id, or with made-up parameter ids, does not start."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from tests.conftest import _refuse_ids_that_are_shared_or_made_up


@dataclass
class CallSpec:
    id: str
    indices: dict[str, int] = field(default_factory=dict)


@dataclass
class Item:
    nodeid: str
    callspec: CallSpec | None = None


def refuse(*items: Item) -> None:
    _refuse_ids_that_are_shared_or_made_up(cast(Any, list(items)))


def test_tests_with_ids_of_their_own_pass() -> None:
    refuse(
        Item("t.py::test_a"),
        Item("t.py::test_b[SVG]", CallSpec("SVG", {"query": 0})),
        Item("t.py::test_b[PNG-Solution]", CallSpec("PNG-Solution", {"query": 1})),
    )


def test_two_tests_under_one_id_stop_the_run() -> None:
    with pytest.raises(pytest.UsageError, match=r"shared: t.py::test_fuzz\n"):
        refuse(Item("t.py::test_fuzz"), Item("t.py::test_fuzz"), Item("t.py::test_other"))


def test_an_id_pytest_made_up_stops_the_run() -> None:
    with pytest.raises(pytest.UsageError, match=r"made up: t.py::test_b\[query1-PNG\]"):
        refuse(Item("t.py::test_b[query1-PNG]", CallSpec("query1-PNG", {"query": 1, "form": 0})))
