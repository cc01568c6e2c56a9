from __future__ import annotations

import sys

from sudokupool.cli import main

# Guarded: the loader starts worker processes with "spawn", which imports __main__ again.
if __name__ == "__main__":
    sys.exit(main())
