"""What the launcher does before it starts the server's workers, when metrics are on.

prometheus-client picks its multiprocess mode when it is imported, from ``PROMETHEUS_MULTIPROC_DIR``;
so the directory must be in the environment the workers start with. It is a fresh temporary directory
(or the operator's, emptied of the last run's files), made before any worker exists.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from collections.abc import MutableMapping

from sudokupool.serving.supervision import temporary_name

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"


def prepare(environ: MutableMapping[str, str], workers: int) -> str | None:
    """Set ``PROMETHEUS_MULTIPROC_DIR`` in ``environ`` when there are several ``workers``.

    An operator's directory is kept and emptied of its ``*.db`` files (the last run's figures); otherwise
    a fresh temporary directory is made. Return the directory made here (for :func:`cleanup`), if any.
    """
    if workers <= 1:
        return None
    given = environ.get(MULTIPROC_DIR)
    if given:
        os.makedirs(given, exist_ok=True)
        for path in glob.glob(os.path.join(given, "*.db")):
            os.remove(path)
        return None
    # Named with the launcher's pid: the next launch removes it if this one is killed (sudokupool.serving.supervision).
    made = tempfile.mkdtemp(prefix=temporary_name("metrics"))
    environ[MULTIPROC_DIR] = made
    return made


def cleanup(made: str | None) -> None:
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
