"""From storage to memory: finding an export, loading it into a pool (``sudokupool.pool``) through the pack
cache, checking it, swapping it in on a sync; and the cached listing of the exports (``listing.py``)."""
