"""The server as the Procfile starts it (``sudokupool serve``), on uvicorn and granian: its bounds against
abusive connections, shutdown, workers and the access log."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sudokupool.cli import build_parser
from sudokupool.config import Settings
from sudokupool.serving.launcher import Worker, granian_argv, launch, serve, uvicorn_options
from sudokupool.serving.protocol import BoundedHttpToolsProtocol
from support.servers import non_reading_clients, read_until_closed, tree_rss
from tests.helpers import free_port, wait_until
from tests.servers import ROOT, Server, command, run_server

# Each test here starts the service (or drives one started for the module) as the Procfile does.
pytestmark = pytest.mark.slow

SERVERS = ["uvicorn", "granian"]
REQUEST = b"GET /api/v1/puzzles/random HTTP/1.1\r\nHost: t\r\n\r\n"


def procfile_argv() -> list[str]:
    (line,) = [ln for ln in (ROOT / "Procfile").read_text().splitlines() if ln.startswith("web:")]
    return shlex.split(line.removeprefix("web:"))


def test_the_procfile_runs_sudokupool_serve_with_the_platforms_port() -> None:
    argv = procfile_argv()
    assert argv[:2] == ["sudokupool", "serve"]
    args = build_parser().parse_args(argv[1:])
    environ = {"PORT": "5123", "WEB_CONCURRENCY": "3"}
    procfile = launch(Settings.from_environ(environ), environ, host=args.host, port=args.port, app=args.app)
    assert (procfile.host, procfile.port, procfile.workers) == ("0.0.0.0", 5123, 3)
    # `sudokupool serve` on the same environment starts the same server, with the same bounds.
    serve = launch(Settings.from_environ(environ), environ, host="0.0.0.0")
    assert serve == procfile
    options = uvicorn_options(procfile)
    assert options["http"] is BoundedHttpToolsProtocol
    assert options["proxy_headers"] is False and options["server_header"] is False
    assert options["workers"] == 3 and options["factory"] is True


@pytest.mark.parametrize("server", ["uvicorn", "granian"])
def test_a_port_in_use_is_refused_before_the_pool_loads(server: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PORT": str(port), "SUDOKUPOOL_SERVER": server}
        argv = [sys.executable, "-m", "sudokupool", "serve", "--host", "127.0.0.1"]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"sudokupool: cannot listen on 127.0.0.1:{port} (--host or SUDOKUPOOL_HOST, and PORT or SUDOKUPOOL_PORT): "
        "Address already in use"
    ]


def test_granian_not_installed_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "granian", None)  # as where `sudokupool[granian]` was not installed
    environ = {"SUDOKUPOOL_SERVER": "granian", "PORT": "1"}
    assert serve(launch(Settings.from_environ(environ), environ, host="127.0.0.1")) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "sudokupool: SUDOKUPOOL_SERVER=granian, but granian is not installed: pip install 'sudokupool[granian]'\n"
    )


def test_granian_gets_the_same_bounds() -> None:
    environ = {
        "SUDOKUPOOL_SERVER": "granian",
        "SUDOKUPOOL_MAX_HEADER_BYTES": "20000",
        "SUDOKUPOOL_FIRST_REQUEST_TIMEOUT": "1.5",
        "SUDOKUPOOL_SHUTDOWN_TIMEOUT": "7",
        "WEB_CONCURRENCY": "2",
    }
    argv = granian_argv(launch(Settings.from_environ(environ), environ))
    text = " ".join(argv[1:])
    for flags in ("--http1-buffer-size 20000", "--http1-header-read-timeout 1500", "--workers-kill-timeout 7",
                  "--workers 2", "--interface asgi --factory", "--no-access-log"):  # fmt: skip
        assert flags in text
    assert argv[-1] == "sudokupool.app:create_app"


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"SUDOKUPOOL_SERVER": request.param, "SUDOKUPOOL_FIRST_REQUEST_TIMEOUT": str(TIMEOUT)}
    with run_server(env, tmp_path_factory.mktemp("server") / "server.log") as running:
        yield running


def address(server: Server) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").split(":")
    return host, int(port)


def connect(server: Server) -> socket.socket:
    return socket.create_connection(address(server), timeout=10)


def test_a_header_block_over_64_kib_is_refused_quickly_while_others_are_served(server: Server) -> None:
    with connect(server) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n")
        line = b"X-Filler: " + b"a" * 4000 + b"\r\n"
        try:
            for _ in range(40):  # 160 kB, never finished
                sock.sendall(line)
        except OSError:
            pass  # the server may have closed the connection already
        # Another client is served meanwhile.
        assert httpx.get(f"{server.url}/api/v1/health", timeout=2).status_code == 200
        answer = sock.recv(200)
        assert answer.split(b"\r\n")[0].split(b" ")[1] in (b"431", b"400")
        assert time.monotonic() - started < 1.0
    # A head just within the limit is served.
    headers = {f"x-filler-{n}": "a" * 4000 for n in range(15)}
    assert httpx.get(f"{server.url}/api/v1/health", headers=headers).status_code == 200


def test_a_silent_connection_is_closed(server: Server) -> None:
    with connect(server) as sock:
        started = time.monotonic()
        assert sock.recv(100) == b""
        assert time.monotonic() - started < 3.0


HEALTH = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n\r\n"
#: The server fixture's SUDOKUPOOL_FIRST_REQUEST_TIMEOUT, and the leeway a closing is given past a limit.
TIMEOUT = 1.0
LEEWAY = 3.0


def until_closed(sock: socket.socket) -> bytes:
    """What the server sends until it closes ``sock`` (a socket timeout, the connection still open, fails)."""
    received, closed = read_until_closed(sock)
    assert closed, f"still open at the socket's timeout, after {received!r}"
    return received


def test_connections_that_send_part_of_a_head_are_closed_within_the_timeout(server: Server) -> None:
    # One byte, or a request line and a header without the blank line that ends the head.
    socks = [connect(server) for _ in range(30)]
    started = time.monotonic()
    for n, sock in enumerate(socks):
        sock.sendall(b"G" if n % 3 else HEALTH[:-2])
    for sock in socks:
        assert until_closed(sock) == b""
        sock.close()
    assert time.monotonic() - started < TIMEOUT + LEEWAY
    assert httpx.get(f"{server.url}/api/v1/health").status_code == 200


def test_a_byte_after_a_keep_alive_answer_does_not_hold_the_connection(server: Server) -> None:
    with connect(server) as sock:
        sock.sendall(HEALTH)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
        started = time.monotonic()
        sock.sendall(b"G")
        assert b"HTTP/1.1" not in until_closed(sock)
        assert time.monotonic() - started < TIMEOUT + LEEWAY


def test_the_keep_alive_limit_holds_after_a_byte(tmp_path: Path) -> None:
    # A head timeout longer than uvicorn's keep-alive (5 s): a byte after an answer does not turn the
    # keep-alive wait into the longer one.
    with (
        run_server({"SUDOKUPOOL_FIRST_REQUEST_TIMEOUT": "60"}, tmp_path / "server.log") as running,
        connect(running) as sock,
    ):
        sock.sendall(HEALTH)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
        started = time.monotonic()
        sock.sendall(b"G")
        assert b"HTTP/1.1" not in until_closed(sock)
        assert time.monotonic() - started < 5 + LEEWAY


#: Where ``struct tcp_info`` (Linux 4.6 and newer) holds ``tcpi_data_segs_in``: segments received that carried data.
DATA_SEGS_IN = 152


def data_segments_in(sock: socket.socket) -> int:
    return int(struct.unpack_from("<I", sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 160), DATA_SEGS_IN)[0])


def answer(sock: socket.socket, request: bytes) -> bytes:
    """Send ``request`` and read its whole answer (its head, and the body its content-length gives)."""
    sock.sendall(request)
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = 0
    if not request.startswith(b"HEAD "):
        (line,) = [ln for ln in head.lower().split(b"\r\n") if ln.startswith(b"content-length:")]
        length = int(line.split(b":")[1])
    while len(body) < length:
        body += sock.recv(65536)
    assert len(body) == length
    return head


@pytest.mark.parametrize(
    "path", ["/api/v1/health", "/api/v2/puzzles/random", "/api/v1/puzzles/nope", "/", "/api/v1/puzzles/random?x"]
)
def test_an_answers_head_and_body_leave_in_one_packet(server: Server, path: str) -> None:
    request = f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode()
    with connect(server) as sock:
        answer(sock, request)  # the connection's first answer may follow an acknowledgement of its own
        for _ in range(3):
            before = data_segments_in(sock)
            assert answer(sock, request).startswith(b"HTTP/1.1 ")
            assert data_segments_in(sock) - before == 1


def test_a_head_request_and_a_closing_answer_arrive_whole(server: Server) -> None:
    with connect(server) as sock:
        head = answer(sock, b"HEAD /api/v1/health HTTP/1.1\r\nHost: t\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert answer(sock, HEALTH).startswith(b"HTTP/1.1 200 OK\r\n")
    with connect(server) as sock:
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        received = until_closed(sock)
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert body.startswith(b'{"ok":true')


def test_clients_that_pipeline_and_never_read_hold_little_memory(server: Server) -> None:
    # Each sends 256 KB of requests and reads nothing: the server stops reading a connection whose answers
    # are not taken (unbounded, 40 such clients took 500 MB).
    clients, size = 40, 256_000
    before = tree_rss(server.process.pid)
    with non_reading_clients(address(server), REQUEST, clients, size, seconds=10) as sent:
        grown = tree_rss(server.process.pid) - before
        assert httpx.get(f"{server.url}/api/v1/health").status_code == 200
    assert sent > clients * size // 2  # the clients did send (into the kernel's buffers at least)
    assert grown <= clients * 2**20, f"{grown / 2**20:.0f} MB for {clients} clients"


def test_a_deep_pipeline_is_answered_in_full_when_its_client_pauses_reading(server: Server) -> None:
    # 10,000 requests (several reads) and a pause longer than the head timeout before reading: the server
    # stops reading while answers wait, and a head it has half read is not timed meanwhile.
    count = 10_000
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect(address(server))
    last = HEALTH.replace(b"Host: t", b"Host: t\r\nConnection: close")
    sender = threading.Thread(target=sock.sendall, args=(HEALTH * (count - 1) + last,))
    sender.start()
    time.sleep(TIMEOUT + 1.5)
    # Then read with a larger buffer: through 4 KB the window reopens by a few answers at a time, so the reading
    # would wait on TCP's zero-window probes (a 40-fold slower run on a loaded machine) rather than on the server.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    received = until_closed(sock)
    sender.join(10)
    sock.close()
    assert received.count(b"HTTP/1.1 ") == received.count(b"HTTP/1.1 200 OK\r\n") == count


def test_uvicorn_sends_no_server_header(tmp_path: Path) -> None:
    with run_server({}, tmp_path / "server.log") as running:
        response = httpx.get(f"{running.url}/api/v1/health")
    assert response.status_code == 200
    assert "server" not in response.headers


def pipeline(server: Server, count: int) -> socket.socket:
    """A client that pipelines up to ``count`` requests and reads nothing."""
    sock = connect(server)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    try:
        for _ in range(count):
            sock.send(REQUEST)
    except BlockingIOError:
        pass
    return sock


def test_a_pipelining_client_that_hangs_up_logs_no_error(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with run_server({}, log) as running:
        for _ in range(3):
            sock = pipeline(running, 20000)
            time.sleep(0.3)
            sock.close()
        time.sleep(0.5)
        assert httpx.get(f"{running.url}/api/v1/health").status_code == 200
    output = log.read_text()
    assert "Traceback" not in output
    assert "ERROR" not in output


def test_sigterm_exits_within_the_bound_and_requests_in_flight_complete(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with run_server({"SUDOKUPOOL_SHUTDOWN_TIMEOUT": "3"}, log) as running:
        hog = pipeline(running, 20000)
        # A client with three requests in flight (pipelined, the first answer arriving) as the signal
        # arrives: all three are answered, completely.
        polite = connect(running)
        polite.sendall(REQUEST * 3)
        received = polite.recv(65536)
        started = time.monotonic()
        running.process.send_signal(signal.SIGTERM)
        while chunk := polite.recv(65536):
            received += chunk
        running.process.wait(10)
        elapsed = time.monotonic() - started
        polite.close()
        hog.close()
    assert received.count(b"HTTP/1.1 ") == received.count(b"HTTP/1.1 200 OK\r\n") == 3
    assert received.endswith(b"}")
    # The hog's connection, still busy, is closed at the bound.
    assert elapsed < 3 + 2.0
    output = log.read_text()
    assert "Traceback" not in output and "ERROR" not in output
    assert "Application shutdown complete" in output


def children(pid: int) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(cmdline)
    return found


@pytest.mark.parametrize("name", SERVERS)
def test_web_concurrency_gives_that_many_workers(tmp_path: Path, name: str) -> None:
    env = {"SUDOKUPOOL_SERVER": name, "WEB_CONCURRENCY": "2"}
    with run_server(env, tmp_path / "server.log") as running:
        workers = [cmd for cmd in children(running.process.pid) if "resource_tracker" not in cmd]
        assert httpx.get(f"{running.url}/api/v1/health").status_code == 200
    assert len(workers) == 2


SECRET = "sk-the-secret-key-value"


@pytest.mark.parametrize("name", SERVERS)
def test_the_access_log_is_off_by_default_and_redacts_keys_when_on(tmp_path: Path, name: str) -> None:
    logs = {}
    for setting in ("off", "on"):
        log = tmp_path / f"{setting}.log"
        env = {"SUDOKUPOOL_SERVER": name, "SUDOKUPOOL_ACCESS_LOG": setting}
        with run_server(env, log) as running:
            assert httpx.get(f"{running.url}/api/v2/health?api_key={SECRET}").status_code == 401
            # The access log writes in batches (at most half a second late): on, wait for the line; off, wait
            # longer than a batch could take, since a line that never comes cannot be waited for.
            if setting == "on":
                wait_until(lambda: "/api/v2/health" in running.output(), "the access log's line", log=running.output)
            else:
                time.sleep(0.7)
        logs[setting] = log.read_text()
    assert "/api/v2/health" not in logs["off"]
    assert "/api/v2/health" in logs["on"]
    assert SECRET not in logs["on"]
    assert "127.0.0.1:" in logs["on"]
    assert '"GET /api/v2/health?api_key=REDACTED HTTP/1.1" 401' in logs["on"]


@pytest.mark.parametrize("name", SERVERS)
def test_a_failed_startup_exits_non_zero_without_a_traceback(tmp_path: Path, name: str) -> None:
    env = {**os.environ, "SUDOKUPOOL_SERVER": name, "SUDOKUPOOL_EXPORTS": str(tmp_path / "nowhere")}
    done = subprocess.run(command(free_port()), env=env, capture_output=True, text=True, timeout=60, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in output
    assert output.count(f"cannot list exports in {tmp_path}/nowhere") == 1


@pytest.mark.parametrize("name", SERVERS)
def test_sigterm_while_startup_retries_storage_stops_at_once(tmp_path: Path, name: str) -> None:
    # Storage that refuses every connection, retried for a minute: the signal ends startup there and
    # then, rather than after the retries (past a platform's grace period before SIGKILL).
    env = {
        **os.environ,
        "SUDOKUPOOL_SERVER": name,
        "SUDOKUPOOL_EXPORTS": "s3://bucket/exports",
        "SUDOKUPOOL_S3_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "SUDOKUPOOL_STORAGE_RETRY_SECONDS": "60",
    }
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command(free_port()), env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while "retrying for up to 60 s" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            process.wait(30)
            elapsed = time.monotonic() - started
        finally:
            process.kill()
            process.wait()
    output = log.read_text()
    assert elapsed < 30  # the retries alone would take 60 s
    assert output.count("stopped by SIGTERM while loading the pool from s3://bucket/exports/") == 1
    assert "Traceback" not in output


class _Pipe:
    """The parent's end of a worker's health-check pipe: an answer after ``answer_after`` polls, or never.
    Each poll returns at once; the timeouts asked for are kept."""

    def __init__(self, answer_after: int | None) -> None:
        self.answer_after, self.sent, self.timeouts = answer_after, list[bytes](), list[float]()

    def send(self, message: bytes) -> None:
        self.sent.append(message)

    def poll(self, timeout: float) -> bool:
        self.timeouts.append(timeout)
        return self.answer_after is not None and len(self.timeouts) > self.answer_after

    def recv(self) -> bool:
        return True


class _Worker:
    """A worker process that is alive for its first ``checks`` liveness checks."""

    def __init__(self, checks: int) -> None:
        self.checks = checks

    def is_alive(self) -> bool:
        self.checks -= 1
        return self.checks >= 0


def handle(pipe: _Pipe, worker: _Worker) -> Worker:
    made = Worker.__new__(Worker)  # no real process or pipe
    made.parent_conn, made.process = pipe, worker  # type: ignore[assignment]
    return made


def test_a_health_check_gives_up_as_soon_as_the_worker_has_exited() -> None:
    # A worker that exits while a check waits for its answer (a failed start): uvicorn's own check waited out
    # its whole timeout in one poll, and the launcher reported the failure ~5 s after the workers had died.
    pipe = _Pipe(answer_after=None)
    assert handle(pipe, _Worker(checks=2)).ping(timeout=3600) is False
    assert pipe.sent == [b"ping"]
    assert len(pipe.timeouts) == 3 and max(pipe.timeouts) <= 0.1


def test_a_health_check_of_a_live_worker_waits_for_its_answer() -> None:
    pipe = _Pipe(answer_after=3)  # a busy worker answers late, within the timeout
    assert handle(pipe, _Worker(checks=10)).is_ready(timeout=3600) is True
    assert len(pipe.timeouts) == 4
