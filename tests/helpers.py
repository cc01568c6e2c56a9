"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import socket

#: A whole clock minute (a rate-limit window starts here).
MINUTE = 1_800_000_000 - 1_800_000_000 % 60


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
