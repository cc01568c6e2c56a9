"""``sudokupool publish FILE --to s3://bucket/prefix/``: check an export, then upload it and its pack under a
time-stamped key.

The check is ``check --fast``: every line as the service loads it (what a service would refuse is refused
here), without replaying solve paths or counting solutions, which cost about twenty times as much CPU and
change nothing the service does with the export. ``--full`` runs the whole ``check`` first.

The upload is :func:`sudokupool.exporting.publish.publish`'s (``--no-gzip`` keeps a plain file plain).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

from sudokupool.commands import CommandError
from sudokupool.commands.options import add_bad_lines_option, limits_from
from sudokupool.commands.output import print_problems
from sudokupool.config import Settings, SettingsError, parse_s3_url
from sudokupool.exporting.publish import PublishError, publish
from sudokupool.loading.loader import LoadError
from sudokupool.loading.verify import check_file


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="check an export and upload it to s3://bucket/prefix/ under a time-stamped key",
        description=(
            "Check an export as the service loads it (check --fast; --full for the whole check), then upload its "
            "pack and the export to s3://bucket/prefix/ under a key named for the time it is published "
            "(pool-YYYYMMDDTHHMMSSZ.ndjson.gz), where services syncing that prefix pick it up."
        ),
    )
    parser.add_argument("file", type=Path, help="an export: .ndjson or .ndjson.gz")
    parser.add_argument("--to", required=True, metavar="s3://BUCKET/PREFIX/", help="where the service's exports live")
    parser.add_argument("--no-gzip", action="store_true", help="upload a plain .ndjson file as it is")
    parser.add_argument(
        "--full", action="store_true", help="replay every solve path and count solutions, as check does (slower)"
    )
    parser.add_argument("--canonical", action="store_true", help="run check --canonical first (slower)")
    add_bad_lines_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        location = parse_s3_url(args.to)
        settings = Settings.from_environ(os.environ)
    except (ValueError, SettingsError) as exc:
        raise CommandError(str(exc)) from None
    limits = limits_from(args)
    with tempfile.TemporaryDirectory(prefix="sudokupool-check-") as scratch:
        checked = Path(scratch) / "checked.pack"
        try:
            # A pack beside the file is not uploaded (publish makes one for the new name), so not checked
            # either. The check's own parse makes the pack.
            fast = not args.full
            report = asyncio.run(
                check_file(args.file, canonical=args.canonical, limits=limits, keep=checked, fast=fast)
            )
        except LoadError as exc:
            # The service would refuse it: the same rule, the same one line.
            if exc.report is not None:
                print_problems(exc.report, file=sys.stderr)
            print(f"sudokupool publish: not uploaded: {exc}", file=sys.stderr)
            return 1
        print_problems(report, file=sys.stderr)
        print(report.summary(), file=sys.stderr)
        # A line the check skipped may be one the service keeps (a solve path that does not replay, say):
        # then the pack is made again from the export as the service reads it.
        same = report.skipped_total == 0
        try:
            key = asyncio.run(
                publish(
                    args.file,
                    location,
                    settings,
                    compress=not args.no_gzip,
                    limits=limits,
                    checked=checked if same else None,
                )
            )
        except PublishError as exc:
            print(f"sudokupool publish: {exc}", file=sys.stderr)
            return 1
    print(f"s3://{location.bucket}/{key}")
    return 0
