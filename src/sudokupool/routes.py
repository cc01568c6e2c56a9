"""One route table, mounted at ``/api/v2``, ``/api/v1`` and (puzzle paths only) the unversioned ``/api``."""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from sudokupool.endpoints import Endpoints


def puzzle_routes(endpoints: Endpoints) -> list[BaseRoute]:
    """The puzzle paths: also served unversioned, for the project's own web page."""
    return [
        Route("/puzzles/random", endpoints.random, methods=["GET"]),
        Route("/puzzles/{id}", endpoints.puzzle, methods=["GET"]),
        Route("/puzzles/{id}/solution", endpoints.solution, methods=["GET"]),
        Route("/puzzles/{id}/image", endpoints.image, methods=["GET"]),
    ]


def api_routes(endpoints: Endpoints) -> list[BaseRoute]:
    """Every path of the versioned API (``/api/v2`` and its alias ``/api/v1``)."""
    return [
        Route("/health", endpoints.health, methods=["GET"]),
        Route("/stats", endpoints.stats, methods=["GET"]),
        Route("/stats/activity", endpoints.activity, methods=["GET"]),
        *puzzle_routes(endpoints),
        Route("/pool-exports", endpoints.pool_exports, methods=["GET"]),
        Route("/openapi.json", endpoints.openapi, methods=["GET"]),
    ]
