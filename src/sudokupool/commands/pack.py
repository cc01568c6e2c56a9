"""``sudokupool pack EXPORT|DIR``: write the pack beside an export (``pool-<ts>.pack``), for fast loads; given a
directory, beside its newest export, as ``check`` reads one (:func:`sudokupool.loading.packing.write_pack`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from sudokupool.commands.options import add_bad_lines_option, limits_from
from sudokupool.loading.loader import LoadError
from sudokupool.loading.packing import write_pack


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "pack",
        help="write the pack beside an export (pool-<ts>.pack)",
        description=(
            "Parse an export as the service loads it (within its SUDOKUPOOL_MAX_* bounds) and write its pack "
            "beside it, pool-<timestamp>.pack, which a service maps instead of parsing the export. Given a "
            "directory, the pack of its newest export."
        ),
    )
    parser.add_argument(
        "export", type=Path, help="an export, pool-YYYYMMDDTHHMMSSZ.ndjson[.gz], or a directory: its newest export"
    )
    add_bad_lines_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Within the service's bounds (``SUDOKUPOOL_MAX_*`` from the environment), as ``check`` does."""
    limits = limits_from(args)
    try:
        written, report = asyncio.run(write_pack(args.export, limits))
    except LoadError as exc:
        print(f"sudokupool pack: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    print(f"wrote {written} ({written.stat().st_size} bytes)")
    return 0
