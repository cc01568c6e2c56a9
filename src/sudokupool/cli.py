"""The ``sudokupool`` command line: serve, check, pack, canonical, grade, build, publish, keys, settings."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from sudokupool import __version__
from sudokupool.commands import COMMAND_MODULES
from sudokupool.config import SettingsError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sudokupool", description="A read-only Sudoku puzzle pool API.")
    parser.add_argument("--version", action="version", version=f"sudokupool {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"sudokupool.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m sudokupool``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code: int = args.func(args)
    except SettingsError as exc:
        # Every command reports a bad setting the same way: one line on stderr, exit status 2.
        print(f"sudokupool: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
