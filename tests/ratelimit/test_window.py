from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sudokupool.ratelimit.window import Decision, decide, seconds_to_reset, window_index
from tests.helpers import MINUTE


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(MINUTE, 60, id="at-the-minute"),
        pytest.param(MINUTE + 0.001, 60, id="just-after-the-minute"),
        pytest.param(MINUTE + 1, 59, id="one-second-in"),
        pytest.param(MINUTE + 59.5, 1, id="half-a-second-left"),
        pytest.param(MINUTE + 59.999, 1, id="a-millisecond-left"),
        pytest.param(MINUTE + 30.2, 30, id="rounds-up"),
    ],
)
def test_seconds_to_reset_never_ends_before_the_window(now: float, expected: int) -> None:
    assert seconds_to_reset(now) == expected
    assert now + seconds_to_reset(now) >= (window_index(now) + 1) * 60


def test_windows_are_aligned_to_the_clock_minute() -> None:
    assert window_index(MINUTE - 0.001) == window_index(MINUTE) - 1
    assert window_index(MINUTE) == window_index(MINUTE + 59.999)
    assert window_index(MINUTE + 60) == window_index(MINUTE) + 1


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        pytest.param(1, Decision(True, 60, 59, 45, 0), id="first"),
        pytest.param(60, Decision(True, 60, 0, 45, 0), id="last-allowed"),
        pytest.param(61, Decision(False, 60, 0, 45, 45), id="first-refused"),
        pytest.param(1000, Decision(False, 60, 0, 45, 45), id="far-over"),
    ],
)
def test_decide(count: int, expected: Decision) -> None:
    assert decide(count, 60, MINUTE + 15) == expected


@given(now=st.floats(min_value=0, max_value=4e9) | st.integers(min_value=0, max_value=4 * 10**9).map(float))
def test_decide_resets_when_the_window_ends_never_before(now: float) -> None:
    decision = decide(1, 5, now)
    end = (window_index(now) + 1) * 60
    assert decision.reset_seconds == seconds_to_reset(now)
    assert 1 <= decision.reset_seconds <= 60
    assert now + decision.reset_seconds >= end > now + decision.reset_seconds - 1
