"""One module per ``sudokupool`` subcommand; each exposes ``register(subparsers)``.

A command's ``run(args) -> int`` returns the process exit code.
"""

from __future__ import annotations

#: Subcommand modules in the order ``sudokupool --help`` lists them.
COMMAND_MODULES = ("serve", "check", "pack", "canonical", "grade", "build", "merge", "publish", "keys", "settings")
