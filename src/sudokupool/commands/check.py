"""``sudokupool check FILE``: validate an export exactly as the service loads it, and more.

Beyond the loader's checks it replays every solve path and confirms each puzzle has one solution;
``--canonical`` also recomputes canonical forms, share codes and symmetry. ``--fast`` makes the loader's
checks (what a service refuses) and the cheap checks of the ids against the grid: ``publish`` checks this way.
The service's bounds apply (``SUDOKUPOOL_MAX_BAD_LINES``, ``SUDOKUPOOL_MAX_RECORD_BYTES``,
``SUDOKUPOOL_MAX_EXPORT_BYTES``): exit 1, with one line saying why, when the service would refuse the
export; bad lines within the bound are listed.
When the export has a pack beside it, the pack must be whole and hold exactly what parsing the export
gives: exit 1 when it does not. The checks are :mod:`sudokupool.loading.verify`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from sudokupool.commands.options import add_bad_lines_option, add_time_limit_option, check_time_limit, limits_from
from sudokupool.commands.output import print_problems
from sudokupool.loading.loader import LoadError
from sudokupool.loading.verify import check_export
from sudokupool.logs import counted
from sudokupool.storage.naming import is_export_name


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "check",
        help="validate an export file (exit 1 when the service would refuse it)",
        description=(
            "Validate an export as the service loads it, within its SUDOKUPOOL_MAX_* bounds, and more: each "
            "puzzle has one solution, its solve path replays, its ids are its grid's (--canonical: worked out in "
            "full). A pack beside the export must hold exactly what parsing the export gives. Exit 1, with one "
            "line saying why, when the service would refuse the export; bad lines within the bound are listed."
        ),
    )
    parser.add_argument("file", type=Path, help="an export (.ndjson or .ndjson.gz), or a directory: its newest export")
    parser.add_argument(
        "--canonical", action="store_true", help="also recompute canonical forms, ids and symmetry (slower)"
    )
    parser.add_argument(
        "--fast",
        action="store_true",
        help="the checks the service makes when it loads, and the cheap ones of the ids: no replay, no uniqueness",
    )
    add_bad_lines_option(parser)
    add_time_limit_option(parser, "checking")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    limits = limits_from(args)
    time_limit = check_time_limit(args.time_per_puzzle)
    try:
        report, pack = asyncio.run(
            check_export(args.file, canonical=args.canonical, limits=limits, fast=args.fast, time_limit=time_limit)
        )
    except LoadError as exc:
        if exc.report is not None:
            print_problems(exc.report)
        print(f"sudokupool check: {exc}", file=sys.stderr)
        return 1
    print_problems(report)
    print(report.summary())
    if args.file.is_file() and not is_export_name(args.file.name):
        print(
            f"note: {args.file.name} is not an export name: the service serves and packs only files named "
            "pool-YYYYMMDDTHHMMSSZ.ndjson[.gz] (`sudokupool publish` uploads it under one)"
        )
    if pack is None:
        return 0
    matches = f"matches the export ({counted(report.loaded, 'puzzle')})"
    print(f"pack {pack.name}: {pack.problem or matches}")
    return 1 if pack.problem else 0
