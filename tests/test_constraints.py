"""constraints.txt: a fresh clone installs the versions CI ran, by the same command as CI."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "pip install -e '.[test]' -c constraints.txt"


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not a pin (name==version)"
            pins[canonicalize_name(name)] = version
    return pins


def _requirements(extra: str | None) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return [Requirement(text) for text in listed]


def test_every_dependency_of_the_service_and_the_test_extra_is_pinned_within_its_range() -> None:
    pins = _pins()
    for requirement in _requirements(None) + _requirements("test"):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not pinned in constraints.txt (scripts/lock writes it)"
        assert requirement.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]} {requirement}"


def test_the_readme_and_ci_install_with_the_constraints() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text().replace(" -q ", " ")  # CI installs quietly

    assert re.search(rf"{re.escape(INSTALL)} && scripts/test\b", readme)
    assert re.search(rf"{re.escape(INSTALL)} && scripts/test\b", ci)
