"""``sudokupool settings``: list every setting with the value in effect here, its default and meaning."""

from __future__ import annotations

import argparse
import os

from sudokupool.config import SETTINGS, describe_unknown, markdown_table, unknown_variables


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "settings",
        help="list the SUDOKUPOOL_* settings and their values here (exit 2 on a bad one)",
        description=(
            "List every SUDOKUPOOL_* setting with the value in effect here (a secret's not shown), its default "
            "and meaning, and any SUDOKUPOOL_* variable that is no setting. Checks them as serve does, PORT and "
            "WEB_CONCURRENCY included: exit 2 with one line on a bad value."
        ),
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print docs/operations.md's settings table (the defaults)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(markdown_table())
        return 0
    # Imported here: the table (--markdown) needs no server.
    from sudokupool.serving.launcher import checked_settings

    checked_settings(os.environ)  # a bad value is one line and exit status 2, as at startup
    for setting in SETTINGS:
        raw = os.environ.get(setting.env)
        if raw is None:
            shown = setting.default
        else:
            value = "(set, not shown)" if setting.secret else raw
            shown = f"{value}    (from the environment; default: {setting.default or 'empty'})"
        print(f"{setting.env}={shown}\n    {setting.help}")
    for name, closest in unknown_variables(os.environ):
        print(f"{describe_unknown(name, closest)}\n    unknown: not a setting, ignored")
    return 0
