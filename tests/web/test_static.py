"""The page's JavaScript modules: their unit tests (``tests/web/js``, run by Node's own test runner) pass, and
every module is served with the page's version, as ``app.js`` imports them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from sudokupool.web.site import STATIC_DIR, asset_version

JS_TESTS = Path(__file__).parent / "js"
MODULES = sorted(path.name for path in STATIC_DIR.glob("*.js"))


@pytest.mark.slow
def test_the_js_unit_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "the JavaScript unit tests need Node.js 20 or later: apt-get install -y nodejs (scripts/test does it)"
        )
    files = sorted(str(path) for path in JS_TESTS.glob("*.test.mjs"))
    assert len(files) >= 7, files
    result = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=120, check=False)

    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout


def test_the_page_is_split_into_modules() -> None:
    views = {"board.js", "panels.js", "messages.js"}
    logic = {"api.js", "game.js", "hints.js", "keys.js", "labels.js", "store.js", "sudoku.js"}
    assert {"app.js", *views, *logic} <= set(MODULES)
    # The pure logic is unit-tested, each module by its own file.
    assert {f"{name[:-3]}.test.mjs" for name in logic} <= {path.name for path in JS_TESTS.glob("*.test.mjs")}


@pytest.mark.anyio
@pytest.mark.parametrize("name", MODULES)
async def test_every_module_is_served_versioned(client: httpx.AsyncClient, name: str) -> None:
    response = await client.get(f"/static/{name}?v={asset_version(STATIC_DIR)}")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.content == (STATIC_DIR / name).read_bytes()
