from __future__ import annotations

import pytest

from bench import containers as images


@pytest.fixture(scope="session")
def image() -> str:
    """The service's image, built from this checkout on the Debian base (bench/containers.py)."""
    missing = images.missing_tools()
    if missing:
        raise AssertionError(f"the image tests need {', '.join(missing)} (scripts/test installs them)")
    return images.build_image()
