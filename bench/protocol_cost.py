"""CPU per request of the service's uvicorn protocol alone: no socket, no app work, in one process.

    python bench/protocol_cost.py [--requests 20000] [--rounds 5] [--cors]
    PYTHONPATH=<a checkout of an earlier commit>/src python bench/protocol_cost.py    # its protocol

``sudokupool.server.BoundedHttpToolsProtocol`` on a stand-in transport (writes are counted and dropped)
is fed a by-id request, one read per request, and answers it from a trivial app with the headers of a
v2 by-id answer (``--cors``: and the two CORS headers every answer carries). The figure is CPU time
(``time.process_time``) per request, median of the rounds: what the protocol's parsing, bounds, timers
and header writing cost, without the network and the app that swamp it in a wrk run on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import uvloop
from uvicorn.config import Config
from uvicorn.server import ServerState

from sudokupool.server import BoundedHttpToolsProtocol

REQUEST = (
    b"GET /api/v2/puzzles/ABCDEFGHJKMNP HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: wrk\r\nX-API-Key: bench\r\n\r\n"
)
HEADERS = [
    (b"content-type", b"application/json"), (b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding"),
    (b"etag", b'W/"abcdef0123456789"'), (b"cache-control", b"public, max-age=3600"),
    (b"content-length", b"3765"), (b"x-ratelimit-limit", b"1000000000"),
    (b"x-ratelimit-remaining", b"999999"), (b"x-ratelimit-reset", b"42"),
]  # fmt: skip
CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-expose-headers", b"X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, "
     b"ETag"),
]  # fmt: skip
BODY = b"x" * 3765


class Transport(asyncio.Transport):
    """Takes every write; never pauses, never closes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: Any) -> None:
        self.writes += 1

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)


async def measure(requests: int, rounds: int, headers: list[tuple[bytes, bytes]]) -> list[float]:
    done = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": list(headers)})
        await send({"type": "http.response.body", "body": BODY})
        done.set()

    config = Config(app=app, loop="none", log_level="warning", access_log=False, server_header=False)
    config.load()
    protocol = BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    protocol.connection_made(Transport())
    found = []
    for _ in range(rounds):
        begin = time.process_time()
        for _ in range(requests):
            done.clear()
            protocol.data_received(REQUEST)
            await done.wait()
        found.append((time.process_time() - begin) / requests * 1e6)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cors", action="store_true", help="answers carry the two CORS headers too")
    args = parser.parse_args(argv)
    rounds = uvloop.run(measure(args.requests, args.rounds, HEADERS + (CORS if args.cors else [])))
    shown = ", ".join(f"{value:.2f}" for value in rounds)
    what = " (CORS headers)" if args.cors else ""
    print(f"protocol CPU µs per request{what}: median {statistics.median(rounds):.2f} ({shown})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
