"""docs/architecture.md against the code: its layers are tests/test_layers.py's table, and every file or folder it
names is there."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import LAYERS, PACKAGE, SRC

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def page_layers(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """The rows of the page's layers table: ``(number, modules)``, in the page's order (``sudokupool``, the package
    itself, read as ``""`` as in LAYERS)."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            names = tuple("" if name == PACKAGE else name for name in re.findall(r"`([^`]+)`", cells[1]))
            rows.append((int(cells[0]), names))
    return rows


def test_the_page_lists_the_layers_of_the_import_check() -> None:
    rows = page_layers(PAGE.read_text())
    assert [number for number, _ in rows] == list(range(len(LAYERS), 0, -1))
    assert [names for _, names in reversed(rows)] == list(LAYERS)


def test_every_file_and_folder_the_page_names_is_there() -> None:
    # A name of the package's (``api/routes.py``), or of the repository's from its root (``tests/api/``); a URL's
    # path (``/api/v2/``) starts with a slash and is none.
    named = set(re.findall(r"`(\w[\w/]*(?:\.py|/))`", PAGE.read_text()))
    missing = sorted(name for name in named if not (SRC / PACKAGE / name).exists() and not (SRC.parent / name).exists())
    assert named and missing == []
