"""Start and stop the servers the suite and the bench run (each its own process on a free loopback port), read
their memory."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The repository's root, where servers are started (``python -m sudokupool``, ``bench.peers``).
ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A loopback port nothing listens on right now (the tests use this one too)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_argv(port: int | str = "{port}", *extra: str) -> list[str]:
    """The Procfile's command line (``sudokupool serve``) on a loopback port (the tests start the service so too)."""
    return [sys.executable, "-m", "sudokupool", "serve", "--host", "127.0.0.1", "--port", str(port), *extra]


def wait_for(ready: Callable[[], bool], *, timeout: float, process: subprocess.Popen[Any] | None, what: str) -> None:
    """Poll ``ready()`` every 20 ms until it is true; RuntimeError when ``process`` exits first or after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} was not ready within {timeout:g} s")
        time.sleep(0.02)


def stop_process(process: subprocess.Popen[Any] | None, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    """Send ``sig`` to ``process`` if it still runs; kill it if it has not exited ``timeout`` seconds later."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def log_tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of the log at ``path``."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a server, its workers and theirs); gone processes are left out."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(child) for child in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return pids


def read_until_closed(sock: socket.socket) -> tuple[bytes, bool]:
    """What the server sends on ``sock`` until it closes it, and whether it did (False: the socket's timeout came
    first). A reset counts as closed: a server may reset a connection it gives up on."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        return received, False
    return received, True


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (a server's workers)."""
    return sum(proc_status(p).get("VmRSS", 0) for p in process_tree(pid))


@contextlib.contextmanager
def non_reading_clients(
    address: tuple[str, int], request: bytes, clients: int, size: int, seconds: float
) -> Iterator[int]:
    """``clients`` connections to ``address`` that each pipeline ``size`` bytes of ``request`` (for at most
    ``seconds``) and never read; yields the bytes they sent, 2 s later (what the server read is parsed and
    answered, as far as it will be, by then), with the connections still open, and closes them after."""
    blob = request * (size // len(request))
    socks = []
    try:
        for _ in range(clients):
            sock = socket.socket()
            socks.append(sock)
            # A small receive buffer: the answers pile up at the server, not in this client's kernel buffer.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(address)
            sock.setblocking(False)
        sent = [0] * clients
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and min(sent) < len(blob):
            for n, sock in enumerate(socks):
                with contextlib.suppress(BlockingIOError):
                    sent[n] += sock.send(blob[sent[n] :]) if sent[n] < len(blob) else 0
            time.sleep(0.05)
        time.sleep(2)
        yield sum(sent)
    finally:
        for sock in socks:
            sock.close()


def redis_outages(server: Server) -> int:
    """How many Redis outages the service ``server`` logged (each is a line when it starts and one when it ends)."""
    assert server.log is not None
    lines = server.log.read_text(errors="replace").splitlines()
    return sum(" unreachable: " in line and "Redis " in line for line in lines)


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of ``pid`` in bytes."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) * 1024
    return values


@dataclass
class Server:
    """One server process. ``ready_seconds`` is the time from process start until ``probe`` answered 200."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    probe: str = "/"
    log: Path | None = None
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    ready_seconds: float = 0.0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.base + self.probe, timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def start(self, timeout: float = 600.0) -> Server:
        """Start the process and wait until ``probe`` answers 200 (RuntimeError with the log's tail if not)."""
        argv = [part.replace("{port}", str(self.port)) for part in self.argv]
        started = time.perf_counter()
        with open(self.log or os.devnull, "wb") as out:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(argv, env={**os.environ, **self.env}, stdout=out,
                                            stderr=subprocess.STDOUT, cwd=ROOT)  # fmt: skip
        try:
            wait_for(self.answers, timeout=timeout, process=self.process, what=self.name)
        except RuntimeError as exc:
            self.stop()
            raise RuntimeError(f"{exc}; its log ends:\n{log_tail(self.log)}" if self.log else str(exc)) from None
        self.ready_seconds = time.perf_counter() - started
        return self

    def __enter__(self) -> Server:
        return self if self.process is not None else self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self, sig: int = signal.SIGINT) -> None:
        stop_process(self.process, sig)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers.items()), exc.read()
