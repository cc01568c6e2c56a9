"""Run the real service (``sudokupool serve``, as the Procfile does) on a free loopback port for a test."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from support import servers as bench_servers
from support.servers import free_port, serve_argv

T = TypeVar("T")


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text()


ROOT = Path(__file__).resolve().parent.parent
APP = "sudokupool.app:create_app"


def command(port: int, factory: str = APP) -> list[str]:
    """The Procfile's command line (``sudokupool serve``) on a loopback port, serving ``factory``'s app."""
    argv = serve_argv(port)
    return argv if factory == APP else [*argv, "--app", factory]


@contextmanager
def run_server(
    env: Mapping[str, str],
    log: Path,
    *,
    factory: str = APP,
    argv: Sequence[str] | None = None,
    timeout: float = 30.0,
) -> Iterator[Server]:
    """Start ``factory``'s app with ``env`` added to the environment; wait until ``/api/v1/health`` answers.

    ``argv``: another command line than the Procfile's, with ``{port}`` where the port goes."""
    port = free_port()
    command_line = command(port, factory) if argv is None else [part.format(port=port) for part in argv]
    server = bench_servers.Server("sudokupool", command_line, dict(env), "/api/v1/health", log, port)
    try:
        server.start(timeout)
    except RuntimeError as exc:
        raise AssertionError(str(exc)) from None
    try:
        assert server.process is not None
        yield Server(server.base, server.process, log)
    finally:
        server.stop(signal.SIGTERM)


def in_one_window(attempt: Callable[[], T], *, tries: int = 3) -> T:
    """What ``attempt()`` returns from a run that began and ended in the same clock minute.

    Rate-limit windows are clock minutes: a test that counts requests against a real server's clock must not
    straddle a window's end, or the count restarts half-way. Rather than wait for a new minute, a run that
    straddled one is done again; ``attempt`` starts afresh each time (its own server, whose counts start at 0).
    """
    for _ in range(tries):
        minute = time.time() // 60
        result = attempt()
        if time.time() // 60 == minute:
            return result
    raise AssertionError(f"{tries} runs in a row each straddled a minute's end")
