"""One module per ``sudokupool`` subcommand, each exposing ``register(subparsers)``, and two helpers: the options
several commands share (``options``) and what long commands print (``output``).

A command parses its arguments, calls the package of its subject and prints; its ``run(args) -> int`` returns
the process exit code. A usage error is a :class:`CommandError`, which the CLI prints as one line on stderr
(``sudokupool COMMAND: why``) with exit status 2.
"""

from __future__ import annotations

#: Subcommand modules in the order ``sudokupool --help`` lists them.
COMMAND_MODULES = ("serve", "check", "pack", "canonical", "grade", "build", "merge", "publish", "keys", "settings")


class CommandError(Exception):
    """The arguments, the settings or the input of a command cannot be used; the message says why (one line)."""
