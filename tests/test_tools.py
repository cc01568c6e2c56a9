"""tests/tools.py: the cache of test-only tools is built once when several processes reach it at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Starts processes (each builds a venv).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BUILD = "from tests.tools import tools; print(tools('race', python=['pip']).python)"


def test_two_processes_building_the_same_tools_at_once_both_get_them(tmp_path: Path) -> None:
    # ``pip`` is in every new venv, so the install needs no network; without the lock the second process removes
    # and rewrites the venv the first is still building, and one of them fails (ensurepip, or pip itself).
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    builds = [
        subprocess.Popen([sys.executable, "-c", BUILD], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [build.communicate(timeout=300)[0].strip() for build in builds]

    assert [build.returncode for build in builds] == [0, 0]
    assert outputs[0] == outputs[1] == str(tmp_path / "sudokupool-test-tools" / "race" / "venv" / "bin" / "python")
    done = subprocess.run([outputs[0], "-m", "pip", "--version"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "sudokupool-test-tools" / "race" / "pins.json").exists()
