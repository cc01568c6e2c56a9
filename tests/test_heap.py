from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sudokupool.heap import release_free_memory


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's, on Linux")
def test_freed_heap_goes_back_to_the_os() -> None:
    # 2 KB objects come from malloc's heap (not mmap, not pymalloc), like a pool's small allocations;
    # every 16th stays alive, so what is freed lies between live blocks and cannot shrink the heap's
    # top: only malloc_trim gives those whole free pages back.
    blocks = [bytes(2048) + bytes([n % 256]) for n in range(100_000)]
    kept = blocks[::16]
    del blocks
    before = rss_bytes()
    assert release_free_memory() is True
    after = rss_bytes()
    assert before - after > 100 * 2**20, (before, after)  # most of the ~190 MB freed came back
    assert len(kept) == 6_250
