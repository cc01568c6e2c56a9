"""The README's "Try it" examples are a real server's answers (scripts/readme_examples.py --check).

The script starts ``sudokupool serve`` on the demo pool on a free loopback port, as the README's set-up
does, runs every example command and compares their output with the README's, after its shortening
and volatile-value rules.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "readme_examples.py"


def check(readme: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--readme", str(readme)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_readme_examples_match_a_fresh_server_on_the_demo_pool() -> None:
    done = check(ROOT / "README.md")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_a_wrong_solution_in_the_readme_is_caught(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    # The solution example with its first two digits swapped: no longer what the service answers.
    wrong, count = re.subn(r'("solution":")(\d)(\d)', r"\1\3\2", text, count=1)
    assert count == 1
    readme = tmp_path / "README.md"
    readme.write_text(wrong, encoding="utf-8")
    done = check(readme)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "out of date" in done.stdout
    assert '-{"canonical_id"' in done.stdout


def test_nothing_in_the_examples_depends_on_the_machine() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"/(work|tmp|home|root)/", text)
