"""The served pool and its formats: the export's records, the pack and its structural check, the gzip members
the bodies are held as, the filters and orders of a choice, the index of the grids, and the record of a pack
copy's checks. The API reads a pool; ``loading/`` finds, loads, checks and swaps one."""
