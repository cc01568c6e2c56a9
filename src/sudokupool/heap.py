"""Give the memory a replaced pool leaves behind back to the operating system.

CPython frees a pool's bytes objects and index as soon as the last request using it ends, but glibc
keeps most of the freed heap for later allocations: measured on a 1M-record pool, RSS went from
1.13 GB to 2.07 GB after one reload and 2.80 GB after two, with one pool alive; ``malloc_trim(0)``
brought it back to 1.17 GB. On a dyno with a memory quota that growth is what gets the process killed.

``malloc_trim`` does not shrink the heaps glibc gives other threads than the main one (the threads
that load and check a pack): a freed heap's top is given back when it grows past the trim threshold,
which glibc raises with every large block freed, up to 64 MB. :func:`fix_thresholds` keeps it (and
the size from which a block gets a mapping of its own) at glibc's starting value instead.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None)  # the symbols the process already has, its C library among them
    except OSError:
        return None


def _find_malloc_trim() -> Callable[[int], int] | None:
    trim: Callable[[int], int] | None = getattr(_libc(), "malloc_trim", None)  # glibc only (not musl)
    return trim


_MALLOC_TRIM = _find_malloc_trim()
#: ``mallopt``'s parameters (glibc's malloc.h), and the value glibc starts both at.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
THRESHOLD = 128 * 1024


def fix_thresholds() -> bool:
    """Keep glibc's trim and mapping thresholds at :data:`THRESHOLD` from now on (``mallopt``); False where
    there is no glibc. Unset, both grow with the large blocks a load frees: a pack's checks left the loading
    thread's heap 20 MB high and 1.9 MB of it kept (its free top) on the 1M pool, in every worker. Fixed, a
    block of 128 KB or more is a mapping of its own, unmapped when freed, and a free top past 128 KB is given
    back: nothing on the request path allocates that much."""
    mallopt: Callable[[int, int], int] | None = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, THRESHOLD)) and bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD))


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS (glibc's ``malloc_trim``); False where there is none.

    It can take some milliseconds on a big heap; ctypes releases the GIL meanwhile, so call it in a
    thread (``asyncio.to_thread``) to keep the event loop serving.
    """
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True
