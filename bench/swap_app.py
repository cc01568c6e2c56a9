"""A bench-only wrapper around the service that reloads its export on request, to measure a swap under load.

    uvicorn --factory swap_app:create_app --app-dir bench ...

``GET /__bench/swap`` starts ``load_latest`` on the app's store followed by ``runtime.install`` in the
background (what a live sync does) and answers at once; ``?background=0`` loads at the server's own
priority instead of a live sync's lower one and ``?niceness=N`` sets how much lower, so the harness
can compare them in one run.
``GET /__bench/swap-status`` answers ``{"done": bool, "seconds": float, "puzzles": int}`` (or, when the
reload failed, ``{"done": true, "error": "..."}``). The trigger
makes the moment of the swap exact, which a sync interval would not; it is never part of the service.
"""

from __future__ import annotations

import asyncio
import time

import orjson
from starlette.types import Receive, Scope, Send

from sudokupool.api.endpoints import query
from sudokupool.app import SudokuPool
from sudokupool.app import create_app as create_service
from sudokupool.loading.loader import LoadLimits, load_latest


class SwapApp:
    def __init__(self, service: SudokuPool) -> None:
        self.service = service
        self.task: asyncio.Task[None] | None = None
        self.background = True
        self.limits = LoadLimits()
        self.status: dict[str, object] = {"done": False, "seconds": 0.0, "puzzles": 0}

    async def reload(self) -> None:
        runtime = self.service.runtime
        assert runtime.store is not None
        started = time.perf_counter()
        try:
            pool, _ = await load_latest(runtime.store, background=self.background, limits=self.limits)
            await runtime.install(pool)  # as the live sync does
        except Exception as exc:  # the bench stops on it rather than waiting for a swap that never ends
            self.status = {"done": True, "error": repr(exc)}
            return
        self.status = {"done": True, "seconds": round(time.perf_counter() - started, 2), "puzzles": len(pool)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith("/__bench/"):
            if path == "/__bench/swap":
                self.background = query(scope, "background") != "0"
                niceness = query(scope, "niceness")
                if niceness is not None:
                    self.limits = LoadLimits(sync_niceness=int(niceness))
                self.status = {"done": False, "seconds": 0.0, "puzzles": 0}
                self.task = asyncio.create_task(self.reload())
            body = orjson.dumps(self.status)
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.service(scope, receive, send)


def create_app() -> SwapApp:
    return SwapApp(create_service())
