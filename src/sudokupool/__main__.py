from __future__ import annotations

import sys

from sudokupool.cli import main

sys.exit(main())
