from __future__ import annotations

import sys

from sudokupool.cli import main

# Guarded: a process started with "spawn" (build and grade may be) imports __main__ again.
if __name__ == "__main__":
    sys.exit(main())
