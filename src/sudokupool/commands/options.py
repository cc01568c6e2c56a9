"""The options several commands share: ``--max-bad-lines`` (``check``, ``pack``, ``publish``) and
``--time-per-puzzle`` (``grade``, ``check``), each with the check of its value."""

from __future__ import annotations

import argparse
import math
import os
from typing import Final

from sudokupool.commands import CommandError
from sudokupool.config import BadLineLimit, Settings, SettingsError
from sudokupool.loading.loader import LoadLimits

#: The default: twenty times the slowest grade measured (docs/grading.md, Measured), so it bounds what no puzzle
#: should need without cutting any that does.
TIME_LIMIT: Final = 10.0


def add_bad_lines_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-bad-lines",
        metavar="N|P%",
        help="most bad lines the export may hold, a count or a percentage (default: SUDOKUPOOL_MAX_BAD_LINES, 0.1%%)",
    )


def limits_from(args: argparse.Namespace) -> LoadLimits:
    """The service's bounds from the environment, with ``--max-bad-lines`` applied; :class:`CommandError` (one
    line) on a bad value."""
    try:
        limits = LoadLimits.from_settings(Settings.from_environ(os.environ))
    except SettingsError as exc:
        raise CommandError(str(exc)) from None
    if args.max_bad_lines is None:
        return limits
    try:
        bound = BadLineLimit.parse(args.max_bad_lines)
    except ValueError as exc:
        raise CommandError(f"--max-bad-lines={args.max_bad_lines!r} {exc}") from None
    return LoadLimits(limits.max_record_bytes, limits.max_export_bytes, bound)


def add_time_limit_option(parser: argparse.ArgumentParser, work: str) -> None:
    """Add ``--time-per-puzzle S``; ``work`` names what stops (``grading``, ``checking``)."""
    parser.add_argument(
        "--time-per-puzzle",
        type=float,
        default=TIME_LIMIT,
        metavar="S",
        help=f"stop {work} a puzzle after S seconds, its verdict then timed-out (default {TIME_LIMIT:g})",
    )


def check_time_limit(seconds: float) -> float:
    """``--time-per-puzzle`` ``seconds`` when it is a positive number; :class:`CommandError` otherwise."""
    if not (seconds > 0 and math.isfinite(seconds)):
        raise CommandError(f"--time-per-puzzle must be a positive number of seconds, not {seconds:g}")
    return seconds
