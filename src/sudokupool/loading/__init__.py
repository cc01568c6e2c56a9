"""From storage to memory: export parsing and naming, the loader's strategies, the pool and its cache."""
