"""Give the memory a replaced pool leaves behind back to the operating system.

CPython frees a pool's bytes objects and index as soon as the last request using it ends, but glibc
keeps most of the freed heap for later allocations: RSS grows with every reload while one pool is alive, and
``malloc_trim(0)`` brings it back (docs/benchmarks.md, "Figures the code's design rests on"). On a dyno with a
memory quota that growth is what gets the process killed.

``malloc_trim`` gives back the free pages inside every heap, but not the free top of a heap glibc made
for another thread than the main one (each thread that allocates gets one, up to 8 per core): such a top is
given back only once it is larger than the trim threshold, which glibc raises with every large block freed,
up to 64 MB. The pack's checks run in a thread of their own: they left its heap's top free in every worker,
for good (docs/benchmarks.md, "Validating a pack"). :func:`one_heap` has every thread allocate from the main
heap instead.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Callable


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None)  # the symbols the process already has, its C library among them
    except OSError:
        return None


_LIBC = _libc()
_MALLOC_TRIM: Callable[[int], int] | None = getattr(_LIBC, "malloc_trim", None)  # glibc only (not musl)
_MALLOPT: Callable[[int, int], int] | None = getattr(_LIBC, "mallopt", None)
#: ``mallopt``'s parameter for the most heaps (arenas) glibc makes (its malloc.h).
M_ARENA_MAX = -8


def one_heap() -> bool:
    """Have the threads started from now on allocate from the main thread's heap (``mallopt(M_ARENA_MAX, 1)``),
    which ``malloc_trim`` shrinks whole; False where there is no glibc. Threads that allocated before keep their
    heaps, and later threads may share those: ``sudokupool serve`` starts its workers with ``MALLOC_ARENA_MAX=1``
    (glibc's own setting, read at a process's start) for that. The service's threads allocate while they hold
    the GIL, so they hardly ever wait for the one heap's lock (docs/benchmarks.md, "Validating a pack")."""
    return _MALLOPT is not None and bool(_MALLOPT(M_ARENA_MAX, 1))


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS (glibc's ``malloc_trim``); False where there is none.

    It can take some milliseconds on a big heap; ctypes releases the GIL meanwhile, so call it in a
    thread (``asyncio.to_thread``) to keep the event loop serving.
    """
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


def freeze_startup_objects() -> None:
    """Leave the objects alive now (the modules, their functions and types, the app) out of every later collection
    of the cyclic garbage collector (``gc.freeze``, after collecting what is garbage already), unless some are left
    out already (a process that started an app before).

    A full collection visits every object the collector tracks and holds up the event loop while it does: tens of
    thousands of them in a worker, none of them garbage; what requests make since is what is left to visit
    (docs/benchmarks.md, "Figures the code's design rests on")."""
    if not gc.get_freeze_count():
        gc.collect()
        gc.freeze()
