"""Serving: the launcher that ``sudokupool serve`` runs (uvicorn or granian with their workers), uvicorn's
bounded protocol, the supervision the launcher and its workers share, and the heap settings of a worker."""
