"""``sudokupool settings``: list every setting with its default and meaning."""

from __future__ import annotations

import argparse

from sudokupool.config import SETTINGS, markdown_table


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("settings", help="list the SUDOKUPOOL_* settings")
    parser.add_argument("--markdown", action="store_true", help="print the README's table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(markdown_table())
        return 0
    for setting in SETTINGS:
        print(f"{setting.env}={setting.default}\n    {setting.help}")
    return 0
