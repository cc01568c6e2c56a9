from __future__ import annotations

import logging
import tracemalloc
from pathlib import Path

import httpx
import pytest
from starlette.types import Scope

from sudokupool.api.clientip import CLIENT_ID, ClientAddresses, client_id, parse_address, resolve
from tests.servers import in_one_window, run_server

XFF = b"x-forwarded-for"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("192.0.2.1", ("192.0.2.1", "192.0.2.1"), id="ipv4"),
        pytest.param(" 192.0.2.1 ", ("192.0.2.1", "192.0.2.1"), id="spaces"),
        pytest.param("192.0.2.1:8080", ("192.0.2.1", "192.0.2.1"), id="ipv4-port"),
        pytest.param("2001:db8:1:2:3:4:5:6", ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"), id="ipv6-per-64"),
        pytest.param("[2001:db8::1]:443", ("2001:db8::1", "2001:db8::/64"), id="ipv6-bracketed-port"),
        pytest.param("::ffff:192.0.2.9", ("192.0.2.9", "192.0.2.9"), id="ipv4-mapped"),
        pytest.param("unknown", None, id="unknown"),
        pytest.param("", None, id="empty"),
        pytest.param("[2001:db8::1", None, id="unclosed-bracket"),
        pytest.param("999.1.1.1", None, id="not-an-address"),
    ],
)
def test_parse_address(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_address(text) == expected


def test_an_address_longer_than_any_ip_is_refused() -> None:
    assert parse_address("192.0.2.1" + " " * 200) == ("192.0.2.1", "192.0.2.1")
    assert parse_address("192.0.2.1" + "0" * 200) is None
    assert parse_address("1" * 101) is None


def test_client_written_forwarded_values_are_not_kept() -> None:
    # 2,000 distinct 60 KB X-Forwarded-For values (as a client behind one trusted hop could send):
    # what stays allocated afterwards is bounded by the cache's size, not by what the clients wrote.
    scope_headers = [(XFF, b"")]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(2000):
            scope_headers[0] = (XFF, f"{n:08d}".encode() + b"x" * 60_000)
            assert resolve(scope_headers, "10.0.0.2", 1) == ("10.0.0.2", "10.0.0.2")
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2_000_000, kept


@pytest.mark.parametrize(
    ("headers", "hops", "expected"),
    [
        pytest.param([(XFF, b"198.51.100.1")], 0, "10.0.0.2", id="hops-0-ignores-the-header"),
        pytest.param([(XFF, b"198.51.100.1")], 1, "198.51.100.1", id="one-hop"),
        pytest.param([(XFF, b"6.6.6.6, 198.51.100.1")], 1, "198.51.100.1", id="client-written-left-is-ignored"),
        pytest.param([(XFF, b"6.6.6.6, 198.51.100.1, 10.0.0.9")], 2, "198.51.100.1", id="two-hops"),
        pytest.param([(XFF, b"6.6.6.6"), (XFF, b"198.51.100.1")], 1, "198.51.100.1", id="several-headers-joined"),
        pytest.param([(XFF, b"198.51.100.1")], 3, "198.51.100.1", id="fewer-entries-than-hops-takes-leftmost"),
        pytest.param([(XFF, b"6.6.6.6, unknown")], 1, "10.0.0.2", id="invalid-entry-falls-back-to-peer"),
        pytest.param([(XFF, b"")], 1, "10.0.0.2", id="empty-header-falls-back-to-peer"),
        pytest.param([], 1, "10.0.0.2", id="no-header-is-the-peer"),
    ],
)
def test_resolve(headers: list[tuple[bytes, bytes]], hops: int, expected: str) -> None:
    assert resolve(headers, "10.0.0.2", hops)[0] == expected


def test_client_id_without_the_middleware_uses_the_peer() -> None:
    assert client_id({"client": ("2001:db8::5", 1)}) == "2001:db8::/64"
    assert client_id({"client": None}) == "unknown"
    assert client_id({"client": ("testclient", 1)}) == "testclient"


def test_apply_rewrites_the_client_and_stores_the_identity() -> None:
    scope: Scope = {"type": "http", "client": ("10.0.0.2", 5555), "headers": [(XFF, b"2001:db8:7:7::1")]}
    ClientAddresses(trusted_hops=1).apply(scope)
    assert scope["client"] == ("2001:db8:7:7::1", 0)
    assert scope[CLIENT_ID] == "2001:db8:7:7::/64"


def test_apply_without_trusted_hops_keeps_the_peer() -> None:
    scope: Scope = {"type": "http", "client": ("10.0.0.2", 5555), "headers": [(XFF, b"198.51.100.7")]}
    ClientAddresses().apply(scope)
    assert scope["client"] == ("10.0.0.2", 5555)
    assert scope[CLIENT_ID] == "10.0.0.2"


FACTORIES = [
    pytest.param("tests.ratelimit.apps:create_test_app", id="limiter-test-app"),
    pytest.param("sudokupool.app:create_app", id="create_app"),
]


@pytest.mark.slow
@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(
    ("hops", "forged", "real"),
    [
        pytest.param("0", "{n}.6.6.6", None, id="no-proxy"),
        pytest.param("1", "{n}.6.6.6, 198.51.100.7", "198.51.100.7", id="behind-one-proxy"),
    ],
)
def test_a_forged_forwarded_for_buys_no_fresh_window(
    tmp_path: Path, export_dir: Path, factory: str, hops: str, forged: str, real: str | None
) -> None:
    env = {
        "SUDOKUPOOL_LIMIT_ANONYMOUS": "3",
        "SUDOKUPOOL_TRUSTED_PROXY_HOPS": hops,
        "SUDOKUPOOL_EXPORTS": str(export_dir),
        "SUDOKUPOOL_REDIS_URL": "",
        "SUDOKUPOOL_ACCESS_LOG": "on",
    }
    log = tmp_path / "server.log"

    def attempt() -> tuple[list[int], str]:
        with run_server(env, log, factory=factory) as server:
            url = server.url
            statuses = [
                httpx.get(f"{url}/api/v2/health", headers={"x-forwarded-for": forged.format(n=n + 1)}).status_code
                for n in range(5)
            ]
        return statuses, log.read_text()

    statuses, access = in_one_window(attempt)
    assert statuses == [200, 200, 200, 429, 429]
    # uvicorn's access log shows the client our middleware resolved, never a forged address.
    assert ".6.6.6" not in access
    assert (f"{real}:0 - " if real else "127.0.0.1:") in access


def test_a_forwarded_header_without_trusted_hops_is_warned_about_once(caplog: pytest.LogCaptureFixture) -> None:
    forwarded = [(b"host", b"x"), (b"x-forwarded-for", b"203.0.113.9")]
    untrusting, trusting = ClientAddresses(), ClientAddresses(trusted_hops=1)
    with caplog.at_level(logging.WARNING, logger="sudokupool.clientip"):
        untrusting.apply({"client": ("10.0.0.2", 1), "headers": [(b"host", b"x")]})
        assert caplog.records == []
        for _ in range(3):
            untrusting.apply({"client": ("10.0.0.2", 1), "headers": forwarded})
            trusting.apply({"client": ("10.0.0.2", 1), "headers": forwarded})
    (record,) = caplog.records
    assert "SUDOKUPOOL_TRUSTED_PROXY_HOPS=0" in record.getMessage() and "10.0.0.2" in record.getMessage()
    # After the warning, the headers are not looked at again.
    assert untrusting.checks_left == 0
