"""Serving: the launcher that ``sudokupool serve`` runs (uvicorn or granian with their workers), uvicorn's
bounded protocol, the supervision the launcher and its workers share, the heap settings of a worker, and the
worker's background tasks with the shutdown signal that stops its startup load (``tasks.py``)."""
