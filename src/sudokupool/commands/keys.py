"""``sudokupool keys``: issue API keys (``keys new``) and check the configured entries (``keys check``)."""

from __future__ import annotations

import argparse
import os
import sys

from sudokupool.config import Settings
from sudokupool.logs import counted
from sudokupool.ratelimit.keys import Keyring, Tier, digest, entry, new_key


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "keys",
        help="issue API keys and check the configured ones",
        description=(
            "Issue an API key (new: the key, to hand over, and its entry for SUDOKUPOOL_API_KEYS, a digest that "
            "never holds the key) or check the configured entries (check)."
        ),
    )
    parser.set_defaults(func=run, keys_command=None)
    commands = parser.add_subparsers(dest="keys_command", metavar="ACTION")
    new = commands.add_parser(
        "new",
        help="print a fresh key and its configuration entry",
        description="Print a fresh random API key and its SUDOKUPOOL_API_KEYS entry (its SHA-256 digest, and tier).",
    )
    new.add_argument(
        "--tier",
        choices=[Tier.KEYED.value, Tier.PRO.value],
        default=Tier.KEYED.value,
        help="the key's rate-limit tier: keyed (SUDOKUPOOL_LIMIT_KEYED requests a minute, 600 by default) or pro "
        "(SUDOKUPOOL_LIMIT_PRO, 6000 by default); default keyed",
    )
    commands.add_parser(
        "check",
        help="parse SUDOKUPOOL_API_KEYS and SUDOKUPOOL_API_KEYS_FILE and count the keys",
        description="Parse the key entries of SUDOKUPOOL_API_KEYS and SUDOKUPOOL_API_KEYS_FILE as serve does, and "
        "count the keys of each tier; exit 2 with one line on a bad entry.",
    )
    parser.set_defaults(help_parser=parser)


def run(args: argparse.Namespace) -> int:
    if args.keys_command == "new":
        return _new(Tier(args.tier))
    if args.keys_command == "check":
        return _check()
    args.help_parser.print_help()
    return 2


def _new(tier: Tier) -> int:
    key = new_key()
    print(f"key:   {key}")
    print(f"entry: {entry(digest(key), tier)}")
    sys.stdout.flush()  # the advice below only once the key is out: an output that fails is one line, and no key
    print(
        "Give the key to its holder: it is shown only this once and stored nowhere. Add the entry to "
        "SUDOKUPOOL_API_KEYS (comma-separated) or as a line of SUDOKUPOOL_API_KEYS_FILE, then restart.",
        file=sys.stderr,
    )
    return 0


def _check() -> int:
    # A bad entry is a SettingsError: one line and exit status 2, as every command reports a bad setting.
    keyring = Keyring.from_settings(Settings.from_environ(os.environ))
    counts = {tier: sum(1 for value in keyring.tiers.values() if value is tier) for tier in (Tier.KEYED, Tier.PRO)}
    print(f"{counted(len(keyring), 'key')}: {counts[Tier.KEYED]} keyed, {counts[Tier.PRO]} pro")
    return 0
