"""How each server `sudokupool serve` can start holds against abusive connections, measured side by side.

    python bench/connections.py --pool snapshots     # docs/benchmarks.md, "Connections"

Both servers are started as the Procfile starts them (``sudokupool serve``, ``SUDOKUPOOL_SERVER`` set per
column) with the default settings. Per server: how long connections that send nothing, one byte, or a
partial head stay open (and what they are answered); how long a kept-alive connection stays open after
an answer, idle or with one byte sent half a second later; the resident memory that clients add which
pipeline 256 KB of requests each and never read (all the server's processes, from /proc); and the
bounds of a request head as the server applies them (largest head, most header lines, longest
request-target accepted, found by bisection; what a larger one gets), and whether bare-LF line endings
are taken. Times are seconds, rounded to 0.1 s; a connection still open at the cap shows as ``> cap``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import OUT, pool_dir, service  # noqa: E402
from servers import Server, proc_status, process_tree  # noqa: E402

REQUEST = b"GET /api/v1/puzzles/random HTTP/1.1\r\nHost: t\r\n\r\n"
HEAD_START = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n"


def connect(server: Server, timeout: float) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=timeout)


def until_closed(sock: socket.socket, since: float) -> tuple[float | None, bytes]:
    """Seconds from ``since`` until the server closed ``sock`` (None: still open at its timeout), and what it
    sent meanwhile."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        return None, received
    return time.monotonic() - since, received


def shown(seconds: float | None, cap: float) -> str:
    return f"> {cap:g}" if seconds is None else f"{seconds:.1f}"


def answered(received: bytes) -> str:
    return received.split(b"\r\n", 1)[0].decode(errors="replace") if received else "nothing"


def slow_connections(server: Server, cap: float) -> dict[str, str]:
    found: dict[str, str] = {}
    with connect(server, cap) as sock:
        seconds, got = until_closed(sock, time.monotonic())
        found["a connection that sends nothing: closed after (s)"] = f"{shown(seconds, cap)}, {answered(got)}"
    socks = [connect(server, cap) for _ in range(30)]
    started = time.monotonic()
    for sock in socks:
        sock.sendall(b"G")
    results = [until_closed(sock, started) for sock in socks]
    for sock in socks:
        sock.close()
    worst = None if any(s is None for s, _ in results) else max(s for s, _ in results if s is not None)
    answers = sorted({answered(got) for _, got in results})
    found["30 connections that send one byte: last closed after (s)"] = f"{shown(worst, cap)}, {', '.join(answers)}"
    with connect(server, cap) as sock:
        started = time.monotonic()
        sock.sendall(HEAD_START)
        seconds, got = until_closed(sock, started)
        found["a partial head: closed after (s)"] = f"{shown(seconds, cap)}, {answered(got)}"
    for name, byte in (("idle", b""), ("one byte sent at 0.5 s", b"G")):
        with connect(server, cap) as sock:
            sock.sendall(HEAD_START + b"\r\n")
            first = sock.recv(65536)
            started = time.monotonic()
            if byte:
                time.sleep(0.5)
                sock.sendall(byte)
            seconds, _ = until_closed(sock, started)
            found[f"after an answer, {name}: closed after (s)"] = f"{shown(seconds, cap)} ({answered(first)})"
    return found


def rss(server: Server) -> int:
    return sum(proc_status(pid).get("VmRSS", 0) for pid in process_tree(server.pid))


def non_readers(server: Server, clients: int, size: int = 256_000) -> str:
    """RSS the server's processes gain from ``clients`` that each pipeline ``size`` bytes of requests
    and never read."""
    before = rss(server)
    blob = REQUEST * (size // len(REQUEST))
    socks = []
    for _ in range(clients):
        sock = socket.socket()
        # A small receive buffer: the answers pile up at the server, not in this client's kernel buffer.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.setblocking(False)
        socks.append([sock, 0])
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and any(sent < len(blob) for _, sent in socks):
        for entry in socks:
            sock, sent = entry
            with contextlib.suppress(BlockingIOError):
                entry[1] += sock.send(blob[sent:]) if sent < len(blob) else 0
        time.sleep(0.05)
    time.sleep(2)  # what was read is parsed and answered (as far as it will be) by now
    after = rss(server)
    sent = sum(s for _, s in socks)
    for sock, _ in socks:
        sock.close()
    return f"+{(after - before) / 2**20:.0f} MB ({clients} clients, {sent / 1e6:.1f} MB sent)"


def status(server: Server, raw: bytes) -> tuple[str, int]:
    """The status line of the server's answer to ``raw`` and the length of its body."""
    with connect(server, 10) as sock:
        with contextlib.suppress(OSError):  # a server may refuse a large head before it is all sent
            sock.sendall(raw)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
                head, sep, body = received.partition(b"\r\n\r\n")
                if sep:
                    lines = head.lower().split(b"\r\n")
                    length = [int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")]
                    if not length or len(body) >= length[0]:
                        return answered(received), len(body)
        except (ConnectionResetError, TimeoutError):
            pass
        return answered(received), 0


def head_of(size: int) -> bytes:
    """A request head of exactly ``size`` bytes, in headers of at most 4,000 bytes."""
    lines, left = [], size - len(HEAD_START) - 2
    while left > 0:
        part = min(left, 4000) if left - 4000 >= 16 or left <= 4000 else left - 16
        lines.append(b"X-%04d: " % len(lines) + b"a" * (part - 10) + b"\r\n")
        left -= part
    return HEAD_START + b"".join(lines) + b"\r\n"


def lines_of(count: int) -> bytes:
    return HEAD_START + b"".join(b"X-%d: a\r\n" % n for n in range(count - 1)) + b"\r\n"


def target_of(length: int) -> bytes:
    path = b"/api/v1/health?x="
    return b"GET " + path + b"a" * (length - len(path)) + b" HTTP/1.1\r\nHost: t\r\n\r\n"


def largest(server: Server, make: Callable[[int], bytes], low: int, high: int) -> tuple[int, str, int]:
    """The largest n in [low, high) whose ``make(n)`` is answered 200, and what n + 1 gets."""
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if status(server, make(middle))[0].startswith("HTTP/1.1 200") else (low, middle)
    refused, body = status(server, make(low + 1))
    return low, refused, body


def bounds(server: Server) -> dict[str, str]:
    found = {}
    for name, make, low, high in (
        ("largest head accepted (bytes)", head_of, 1000, 300_000),
        ("most header lines accepted", lines_of, 2, 20_000),
        ("longest request-target accepted (bytes)", target_of, 100, 300_000),
    ):
        size, refused, body = largest(server, make, low, high)
        found[name] = f"{size:,}; one more: {refused}, {body} bytes of body"
    line, _ = status(server, HEAD_START.replace(b"\r\n", b"\n") + b"\n")
    found["bare-LF line endings"] = line
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="snapshots", help="pool name under bench/pools or a directory")
    parser.add_argument("--clients", type=int, default=40, help="clients that pipeline and never read")
    parser.add_argument("--cap", type=float, default=40.0, help="seconds a connection is watched before '> cap'")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    columns: dict[str, dict[str, str]] = {}
    for name in ("uvicorn", "granian"):
        server = service(directory, OUT / f"connections-{name}.log", env={"SUDOKUPOOL_SERVER": name})
        server.start()
        try:
            found = slow_connections(server, args.cap)
            found["clients pipelining 256 KB, never reading: RSS"] = non_readers(server, args.clients)
            found.update(bounds(server))
        finally:
            server.stop()
        columns[name] = found
        print(name, found, file=sys.stderr)
    versions = ", ".join(f"{name} {version(name)}" for name in ("uvicorn", "granian", "httptools", "uvloop"))
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, {versions}")
    print("| | uvicorn | granian |\n|---|---|---|")
    for row in columns["uvicorn"]:
        print(f"| {row} | {columns['uvicorn'][row]} | {columns['granian'][row]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
