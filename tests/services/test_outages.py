from __future__ import annotations

import asyncio
import logging

import pytest

from sudokupool.services.outages import REDIS_MEANWHILE, redis_outages, storage_outages
from tests.helpers import FakeClock, wait_until_async


def lines(caplog: pytest.LogCaptureFixture, logger: str) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == logger]


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(500.0)
    log = storage_outages(clock=clock)
    with caplog.at_level(logging.INFO, logger="sudokupool.storage"):
        log.recovered()  # not down: nothing to say
        assert not log.down
        log.failed("sync: Connection refused")
        clock.now += 2.5
        log.failed("pool-exports listing: Connection refused")
        log.failed("sync: timed out")
        assert log.down
        clock.now += 1.0
        log.recovered()
        log.recovered()
        assert not log.down
    assert lines(caplog, "sudokupool.storage") == [
        ("WARNING", "storage unreachable: sync: Connection refused"),
        ("INFO", "storage is reachable again after 3.5 s; 3 call(s) failed meanwhile"),
    ]


def test_a_failure_the_caller_logged_starts_the_outage_silently(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(500.0)
    log = storage_outages(clock=clock)
    with caplog.at_level(logging.INFO, logger="sudokupool.storage"):
        log.failed("FALLBACK: serving the fallback", logged=True)
        log.failed("sync: still down")
        clock.now += 60
        log.recovered()
    assert lines(caplog, "sudokupool.storage") == [
        ("INFO", "storage is reachable again after 60.0 s; 2 call(s) failed meanwhile"),
    ]


def test_each_server_has_its_own_outage_with_the_error_and_the_requests_answered_without_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock(500.0)
    log = redis_outages(clock=clock)
    with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
        log.skipped(5, server="10.0.0.1:6379")  # not down: not counted
        log.failed("rate limiter", error=ConnectionError("refused"), server="10.0.0.1:6379")
        log.skipped(7, server="10.0.0.1:6379")
        log.failed("activity read", error=TimeoutError("timed out"), server="10.0.0.2:6379")
        clock.now += 0.5
        log.recovered("10.0.0.1:6379")
        assert log.down  # the second server is still failing
        log.recovered("10.0.0.2:6379")
        assert not log.down
    assert lines(caplog, "sudokupool.redis") == [
        ("WARNING", f"Redis 10.0.0.1:6379 unreachable: rate limiter: ConnectionError: refused; {REDIS_MEANWHILE}"),
        ("WARNING", f"Redis 10.0.0.2:6379 unreachable: activity read: TimeoutError: timed out; {REDIS_MEANWHILE}"),
        (
            "INFO",
            "Redis 10.0.0.1:6379 is reachable again after 0.5 s; 1 call(s) failed, 7 request(s) answered without it"
            " meanwhile",
        ),
        ("INFO", "Redis 10.0.0.2:6379 is reachable again after 0.5 s; 1 call(s) failed meanwhile"),
    ]


@pytest.mark.anyio
async def test_a_server_that_stopped_answering_is_probed_until_it_answers(caplog: pytest.LogCaptureFixture) -> None:
    asked: list[str] = []
    answers = [False, False, True]

    async def probe(server: str) -> None:
        asked.append(server)
        if not answers.pop(0):
            raise ConnectionError("refused")

    log = redis_outages(probe=probe, probe_interval=0.01)
    with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
        log.recovered("10.0.0.2:6379")
        log.failed("rate limiter", error=TimeoutError("timed out"), server="10.0.0.1:6379")
        log.failed("rate limiter", error=TimeoutError("timed out"), server="10.0.0.1:6379")  # one probe, not two
        assert log.states() == {"10.0.0.1:6379": True, "10.0.0.2:6379": False}
        await wait_until_async(lambda: not log.down, "the probe finding the server back", seconds=2)
    assert asked == ["10.0.0.1:6379"] * 3
    assert log.states() == {"10.0.0.1:6379": False, "10.0.0.2:6379": False}
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]
    assert caplog.records[1].getMessage().endswith("; 2 call(s) failed meanwhile")
    assert caplog.records[1].node == "10.0.0.1:6379"  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_server_that_answered_with_an_error_is_not_probed_and_a_probe_stops_at_shutdown() -> None:
    asked: list[str] = []

    async def probe(server: str) -> None:
        asked.append(server)
        raise ConnectionError("refused")

    log = redis_outages(probe=probe, probe_interval=0.01)
    log.failed("rate limiter", error=RuntimeError("OOM command not allowed"), server="a:1", probe=False)
    log.failed("rate limiter", error=ConnectionError("refused"), server="b:1")
    await wait_until_async(lambda: len(asked) > 0, "a probe")
    await log.aclose()
    probed = len(asked)
    await asyncio.sleep(0.05)
    assert set(asked) == {"b:1"}
    assert probed == len(asked) > 0
    assert log.states() == {"a:1": True, "b:1": True}


def test_a_configuration_error_is_one_line_however_often_it_is_met(caplog: pytest.LogCaptureFixture) -> None:
    log = redis_outages()
    with caplog.at_level(logging.INFO, logger="sudokupool.redis"):
        for _ in range(5):
            log.configuration_error("set SUDOKUPOOL_REDIS_MODE=cluster")
    assert lines(caplog, "sudokupool.redis") == [("ERROR", "set SUDOKUPOOL_REDIS_MODE=cluster")]
    assert not log.down
