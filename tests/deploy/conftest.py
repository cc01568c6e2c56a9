from __future__ import annotations

import pytest

from support import containers as images


@pytest.fixture(scope="session")
def image() -> str:
    """The service's image, built from this checkout on the Debian base (support/containers.py)."""
    missing = images.missing_tools()
    if missing:
        raise AssertionError(f"the image tests need {', '.join(missing)} (scripts/test installs them)")
    return images.build_image()
