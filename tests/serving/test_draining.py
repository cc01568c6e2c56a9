"""A stop loses no request: clients connecting and sending until the very end get an answer or a refusal."""

from __future__ import annotations

import select
import signal
import socket
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from sudokupool.serving.draining import queued_connections, refuse_new_connections
from tests.helpers import wait_until
from tests.servers import run_server


def listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


def test_a_refusing_listener_lets_no_connection_in_and_keeps_those_it_has() -> None:
    with listener() as sock:
        address = sock.getsockname()
        # Open before: one accepted, one completed and still in the accept queue.
        open_one = socket.create_connection(address, timeout=5)
        open_two = socket.create_connection(address, timeout=5)
        wait_until(lambda: select_readable(sock), "the first connection queued")
        accepted, _ = sock.accept()
        assert refuse_new_connections(sock) is True
        # A new connection's handshake never completes (its SYN is dropped, so it is sent again later, and refused
        # once the listener is closed).
        late = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        late.settimeout(0.5)
        with pytest.raises(TimeoutError):
            late.connect(address)
        late.close()
        # The connection already open carries data both ways; the queued one is still there to be served.
        open_one.sendall(b"ping")
        accepted.setblocking(True)
        assert accepted.recv(4) == b"ping"
        accepted.sendall(b"pong")
        assert open_one.recv(4) == b"pong"
        queued = queued_connections(sock)
        assert len(queued) == 1
        open_two.sendall(b"still here")
        wait_until(lambda: select_readable(queued[0]), "the queued connection's bytes")
        assert queued[0].recv(64) == b"still here"
        for each in (open_one, open_two, accepted, *queued):
            each.close()
    # Once the listener is closed, a new connection is refused at once.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5)


def get(http: httpx.Client, url: str) -> str:
    """One request's outcome: the status of a whole answer, ``refused`` at connect, or what went wrong."""
    try:
        answer = http.get(url)
    except httpx.ConnectError:
        return "refused"
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return str(answer.status_code) if answer.content.endswith(b"}") else "truncated"


def select_readable(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


@pytest.mark.parametrize("workers", [pytest.param(1, id="one-worker"), pytest.param(2, id="two-workers")])
def test_sigterm_while_clients_connect_and_send_loses_no_request(tmp_path: Path, workers: int) -> None:
    env = {"WEB_CONCURRENCY": str(workers), "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000000", "SUDOKUPOOL_SYNC_INTERVAL": "0"}
    outcomes: list[tuple[float, float, str]] = []
    stop = threading.Event()
    with run_server(env, tmp_path / "server.log") as running:
        wait_until(lambda: running.output().count("loaded ") == workers, "every worker loaded", log=running.output)
        url = f"{running.url}/api/v2/puzzles/random"

        def client(keep_alive: bool) -> None:
            # Half the clients open a connection per request (a load balancer's new connections), half keep theirs:
            # a request on a kept-alive connection that the server closes as it is sent (as at any keep-alive
            # timeout) is sent again on a new one, as HTTP clients do for idempotent requests (RFC 9112, 9.3.1).
            limits = httpx.Limits(max_keepalive_connections=None if keep_alive else 0)
            kind = "kept" if keep_alive else "new"
            with httpx.Client(limits=limits, timeout=30) as http:
                while not stop.is_set():
                    at = time.monotonic()
                    outcome = get(http, url)
                    if keep_alive and outcome in ("ReadError", "RemoteProtocolError"):
                        outcome = get(http, url)
                    outcomes.append((at, time.monotonic(), f"{kind} {outcome}"))

        threads = [threading.Thread(target=client, args=(index % 2 == 0,)) for index in range(16)]
        for thread in threads:
            thread.start()
        wait_until(lambda: len(outcomes) >= 64, "64 answers before the signal", seconds=60)
        signalled = time.monotonic()
        running.process.send_signal(signal.SIGTERM)
        assert running.process.wait(30) == 0
        stop.set()
        for thread in threads:
            thread.join(60)
        output = running.output()
    # A request that ended before the signal was answered; one that ended after it, answered whole or refused at
    # connect (sent again elsewhere by a client or load balancer), never reset or closed unanswered once sent. (A
    # request begun before the signal may connect after it: on a loaded machine its SYN can come late.)
    before = Counter(outcome for _, end, outcome in outcomes if end < signalled)
    after = Counter(outcome for _, end, outcome in outcomes if end >= signalled)
    begun_after = Counter(outcome for at, _, outcome in outcomes if at >= signalled)
    assert set(before) <= {"new 200", "kept 200"}, (before, after)
    assert set(after) <= {"new 200", "new refused", "kept 200", "kept refused"}, after
    assert begun_after["new refused"] >= 1, begun_after
    assert "Traceback" not in output and "ERROR" not in output
