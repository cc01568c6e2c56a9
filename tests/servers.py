"""Run the real service (``sudokupool serve``, as the Procfile does) on a free loopback port for a test."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx

from tests.helpers import free_port

T = TypeVar("T")


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        return self.log.read_text()


ROOT = Path(__file__).resolve().parent.parent
APP = "sudokupool.app:create_app"


def command(port: int, factory: str = APP) -> list[str]:
    """The Procfile's command line (``sudokupool serve``) on a loopback port, serving ``factory``'s app."""
    argv = [sys.executable, "-m", "sudokupool", "serve", "--host", "127.0.0.1", "--port", str(port)]
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
    handle = log.open("w")
    process = subprocess.Popen(
        command(port, factory) if argv is None else [part.format(port=port) for part in argv],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=handle,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise AssertionError(f"server exited with {process.returncode}:\n{log.read_text()}")
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not come up in {timeout} s:\n{log.read_text()}")
            time.sleep(0.1)
        yield Server(url, process, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        handle.close()


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
