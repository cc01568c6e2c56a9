"""From storage to memory: export parsing and naming, the loader's strategies, the pool and its cache,
and the cached listing of the exports (``listing.py``)."""
