"""``python -m bench``: every command reaches its function, and the side-by-side runner's rounds and baselines."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import COMMANDS
from bench.ab import TARGETS
from bench.harness import baseline_src, interleave, rotated

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_its_function(name: str) -> None:
    module, entry, _ = COMMANDS[name]
    assert callable(getattr(importlib.import_module(f"bench.{module}"), entry))


def test_the_listing_names_every_command_and_target() -> None:
    listing = subprocess.run([sys.executable, "-m", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert listing.returncode == 2 and all(f"  {name} " in listing.stderr for name in COMMANDS)
    targets = subprocess.run([sys.executable, "-m", "bench", "ab", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert targets.returncode == 0 and all(name in targets.stdout for name in TARGETS)


def test_rounds_rotate_the_order_and_drop_the_warm_up() -> None:
    calls: list[tuple[str, int]] = []
    found = interleave(["a", "b", "c"], 3, lambda item, n: calls.append((item, n)) or f"{item}{n}", warm_up=True)
    assert [item for item, _ in calls] == ["c", "a", "b", "a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert found == {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"], "c": ["c0", "c1", "c2"]}
    assert rotated([1, 2, 3], 4) == [2, 3, 1]


def test_a_baseline_is_a_source_directory_or_a_revision(tmp_path: Path) -> None:
    (tmp_path / "sudokupool").mkdir()
    with baseline_src(str(tmp_path)) as src:
        assert src == tmp_path
    with baseline_src("HEAD") as src:
        assert (src / "sudokupool" / "__init__.py").is_file() and ROOT not in src.parents
    assert not src.exists()
