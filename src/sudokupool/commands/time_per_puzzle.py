"""``--time-per-puzzle S``: the seconds one puzzle may take in ``grade`` and ``check``."""

from __future__ import annotations

import argparse
import math
from typing import Final

#: The default: twenty times the slowest grade measured (docs/grading.md, Measured: 0.46 s), so it bounds
#: what no puzzle should need without cutting any that does.
TIME_LIMIT: Final = 10.0


def add_time_limit_option(parser: argparse.ArgumentParser, work: str) -> None:
    """Add ``--time-per-puzzle S``; ``work`` names what stops (``grading``, ``checking``)."""
    parser.add_argument(
        "--time-per-puzzle",
        type=float,
        default=TIME_LIMIT,
        metavar="S",
        help=f"stop {work} a puzzle after S seconds, its verdict then timed-out (default {TIME_LIMIT:g})",
    )


def time_limit_problem(seconds: float) -> str | None:
    """What is wrong with ``--time-per-puzzle`` ``seconds``, or None."""
    if not (seconds > 0 and math.isfinite(seconds)):
        return f"--time-per-puzzle must be a positive number of seconds, not {seconds:g}"
    return None
