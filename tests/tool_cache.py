"""Test-only npm tools, installed at pinned versions into the user's cache directory and shared by every clone.

The cache is ``$XDG_CACHE_HOME/sudokupool-test-tools`` (or ``~/.cache/...``), one folder per tool set. A set is
installed once per pin set: a stamp file holds the pins it was installed with, and a different stamp means a
fresh install. The install runs under an exclusive ``fcntl.flock`` on a lock file beside the folder, so test
workers (or two clones' runs) that ask for the same set at once wait for one install instead of racing in the
same ``node_modules``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

# No telemetry, update notices or funding messages from npm.
NPM_QUIET = {"npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}


def tools_root() -> Path:
    """The shared cache folder of the test tools."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    root = Path(cache) / "sudokupool-test-tools"
    root.mkdir(parents=True, exist_ok=True)
    return root


def npm_tools(name: str, pins: dict[str, str]) -> Path:
    """The ``node_modules`` folder of the tool set ``name`` holding exactly the npm packages ``pins``
    (package: version), installed under a file lock when missing or pinned differently."""
    root = tools_root()
    folder = root / name
    stamp = folder / "pins.json"
    wanted = json.dumps({"node": pins}, sort_keys=True)
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == wanted:
            return folder / "node_modules"
        assert shutil.which("npm"), "these tests need Node.js and npm (Debian: apt-get install -y nodejs npm)"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / "package.json").write_text(json.dumps({"private": True, "dependencies": pins}))
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            env={**os.environ, **NPM_QUIET},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"npm install in {folder} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        stamp.write_text(wanted)
    return folder / "node_modules"
