"""The layers of src/sudokupool (docs/architecture.md, which tests/test_architecture.py holds to this table): each
module imports only from its own layer or the ones below it. Checked from the source with ``ast``, every import
counted, those inside functions and under ``TYPE_CHECKING`` too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "sudokupool"

#: From the bottom up: a module or package name (relative to ``sudokupool``) and the layer it is in. A module
#: is in the layer of its longest listed prefix; ``""`` is the package itself (its ``__version__``).
LAYERS: tuple[tuple[str, ...], ...] = (
    # The puzzle itself: grids, solver, techniques, grader. Nothing else of ours.
    ("", "sudoku"),
    # Settings, logging (with counts in words), services/: the Redis client and the outage log; and the parts of
    # serving/ the workers use below the app: the launcher's supervision, the heap trim, task cancelling.
    ("config", "logs", "services", "serving.supervision", "serving.heap", "serving.tasks"),
    # Where exports live (a directory, S3) and how exports and their packs are named.
    ("storage",),
    # The served pool and its formats: export records, the pack and its check, the gzip member, choices, grids.
    ("pool",),
    # Finding, loading, checking and swapping a pool: the loader, the pack cache, the sync, the export listing.
    ("loading",),
    # Windows, counters and their stores, and the issued keys (ratelimit/keys.py): no HTTP in here.
    ("ratelimit", "activity"),
    # Renders, and the bounded pool that runs computed work (renders, print sheets, grades) with its result cache.
    ("images", "work"),
    # Making exports: build orders and their workers, the export writer, build and merge, publishing.
    ("exporting",),
    # The live pool reference with its caches.
    ("state",),
    # The HTTP surface: front, limiter, routes with their operations, handlers.
    ("api",),
    # Observes the layers below.
    ("metrics",),
    # The app's assembly, web/: the page with its print sheet; serving/: the launcher and its bounded protocol.
    ("app", "web", "serving"),
    ("commands", "cli", "__main__"),
)

LAYER_OF: dict[str, int] = {name: level for level, names in enumerate(LAYERS) for name in names}


def layer_of(module: str) -> int:
    """The layer of ``module`` (a dotted name under ``sudokupool``, or a name imported from it)."""
    parts = module.split(".")[1:]
    for length in range(len(parts), 0, -1):
        level = LAYER_OF.get(".".join(parts[:length]))
        if level is not None:
            return level
    # ``from sudokupool import __version__``, or a module no layer lists (test_every_module_is_in_a_layer).
    return LAYER_OF[""]


def layer_name(level: int) -> str:
    return "/".join(name or PACKAGE for name in LAYERS[level])


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for every import of ours in ``tree``; ``from a import b`` counts as ``a.b`` (b may be
    a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}"


def upward_imports(src: Path = SRC) -> Iterator[str]:
    """One line for each import of a higher layer in the package under ``src``."""
    for path in sorted((src / PACKAGE).rglob("*.py")):
        module = module_name(path, src)
        level = layer_of(module)
        tree = ast.parse(path.read_text(), str(path))
        for line, target in imported(tree, module, path.name == "__init__.py"):
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            target_level = layer_of(target)
            if target_level > level:
                yield (
                    f"{path.relative_to(src.parent)}:{line}: {module} ({layer_name(level)}) imports {target} "
                    f"({layer_name(target_level)}, a layer above)"
                )


def test_every_module_is_in_a_layer() -> None:
    unplaced = []
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = module_name(path).split(".")
        if len(parts) > 1 and parts[1] not in LAYER_OF:
            unplaced.append(str(path.relative_to(SRC.parent)))
    assert unplaced == [], "modules no layer lists (add them to LAYERS in tests/test_layers.py)"


def test_no_module_imports_a_higher_layer() -> None:
    assert list(upward_imports()) == []


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("pool/pool.py", "from sudokupool.api.compression import inflate\n"),
        ("pool/pool.py", "from ..api import compression\n"),
        ("storage/s3.py", "def f() -> None:\n    import sudokupool.state\n"),
        ("sudoku/grader.py", "from sudokupool import config\n"),
    ],
)
def test_an_upward_import_is_found(tmp_path: Path, path: str, source: str) -> None:
    """The check itself: each of these imports of a higher layer (absolute, relative, inside a function, of a
    module by ``from package import module``) is named."""
    file = tmp_path / PACKAGE / path
    file.parent.mkdir(parents=True)
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    file.write_text(source)
    found = list(upward_imports(tmp_path))
    assert len(found) == 1
    assert f"/{PACKAGE}/{path}:" in found[0]
    assert found[0].endswith("a layer above)")


def test_an_import_from_the_same_or_a_lower_layer_passes(tmp_path: Path) -> None:
    file = tmp_path / PACKAGE / "api" / "routes.py"
    file.parent.mkdir(parents=True)
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    file.write_text("from sudokupool import __version__\nfrom sudokupool.api import errors\nimport sudokupool.state\n")
    assert list(upward_imports(tmp_path)) == []
