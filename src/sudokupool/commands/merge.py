"""``sudokupool merge EXPORT_OR_DIR... --out DIR/``: join exports made anywhere into one export and its pack.

A pool larger than one machine's build is made in shards, each a ``build`` with its own ``--seed`` (on other
machines, other days), then merged. Inputs are read in the order given (a directory: every export in it,
oldest first); what is kept and dropped is :mod:`sudokupool.exporting.merge`'s. Working out canonical forms
is the work ``--jobs`` spreads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from sudokupool.commands import CommandError
from sudokupool.exporting.merge import Unreadable, exports_of, merge_one
from sudokupool.exporting.workers import worker_pool
from sudokupool.exporting.writer import ExportWriter, export_limit_problem, output_path, prepare_output
from sudokupool.logs import counted
from sudokupool.storage.naming import is_export_name


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``merge`` subcommand."""
    parser = subparsers.add_parser(
        "merge",
        help="join exports (e.g. shards built with different seeds) into one export and its pack",
        description=(
            "Join exports into one export and its pack: records in input order, unchanged, each puzzle once "
            "(a record whose canonical form, worked out from its grid, came before is dropped, the first kept; "
            "a record whose ids are not its grid's is skipped). A directory stands for every export in it, "
            "oldest first. A pool larger than one build: build shards with different --seed values (anywhere), "
            "then merge them."
        ),
    )
    parser.add_argument("inputs", metavar="EXPORT_OR_DIR", nargs="+", type=Path, help="an export, or a directory")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="work out canonical forms in N processes (default: all CPUs)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="a directory to write pool-<UTC time>.ndjson.gz and its pack in (a path ending in / is made if "
        "missing), or an output file as for build",
    )
    parser.set_defaults(func=run)


def _tally(counts: Counter[str]) -> str:
    """One input's line of the report: ``4 kept, 1 duplicate dropped, 2 bad lines skipped``."""
    parts = [f"{counts['kept']} kept", f"{counted(counts['duplicate'], 'duplicate')} dropped"]
    if counts["bad"]:
        parts.append(f"{counted(counts['bad'], 'bad line')} skipped")
    if counts["wrong ids"]:
        parts.append(f"{counted(counts['wrong ids'], 'record')} with wrong ids skipped")
    return ", ".join(parts)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when merged, 1 when an input cannot be read or the result written, 2 on bad arguments."""
    inputs: list[Path] = []
    for item in args.inputs:
        try:
            found = exports_of(item)
        except OSError as exc:
            raise CommandError(str(exc)) from None
        if not found:
            raise CommandError(f"{item} holds no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz])")
        inputs += found
    try:
        out = prepare_output(args.out)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    directory = out if out.is_dir() else out.parent
    if args.jobs < 1:
        raise CommandError("--jobs must be at least 1")
    seen: set[str] = set()
    dropped = 0
    started = time.monotonic()
    # More processes than CPUs would only cost their start-up and memory.
    jobs = min(args.jobs, os.cpu_count() or 1)
    try:
        with (
            worker_pool(jobs) if jobs > 1 else nullcontext() as pool,
            ExportWriter(directory, gzipped=out.is_dir() or out.name.endswith(".gz"), pack=True) as writer,
        ):
            for path in inputs:
                try:
                    counts = merge_one(path, seen, writer, pool)
                except Unreadable as exc:
                    print(f"sudokupool merge: cannot read {path}: {exc}", file=sys.stderr)
                    return 1
                dropped += counts["duplicate"]
                print(f"{path}: {_tally(counts)}", file=sys.stderr)
            if not writer.count:
                print("sudokupool merge: no record to write", file=sys.stderr)
                return 1
            path = output_path(out, datetime.now(UTC))
            packed = writer.commit(path, pack=is_export_name(path.name))
    except OSError as exc:
        print(f"sudokupool merge: cannot write the export in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {counted(writer.count, 'puzzle')} from {counted(len(inputs), 'export')} "
        f"({counted(dropped, 'duplicate')} dropped) to {path} "
        f"in {time.monotonic() - started:.1f} s "
        f"({path.stat().st_size / 1e6:.2f} MB)" + (f" and its pack {packed.name}" if packed else ""),
        file=sys.stderr,
    )
    if problem := export_limit_problem(writer.inflated):
        print(f"sudokupool merge: {problem}", file=sys.stderr)
    return 0
