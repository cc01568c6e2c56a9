"""The metrics port's text format is prometheus-client's, byte for byte, whatever the metrics hold."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Enum,
    Gauge,
    Histogram,
    Info,
    Summary,
    disable_created_metrics,
    enable_created_metrics,
)
from prometheus_client import metrics as prometheus_metrics
from prometheus_client.core import GaugeHistogramMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.gc_collector import GCCollector
from prometheus_client.openmetrics.exposition import ALLOWUTF8, DOTS, UNDERSCORES, VALUES
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from sudokupool.metrics.text import PART_LINES, families


class Fixed(Collector):
    """Families that prometheus-client's metric classes do not make: a gauge histogram, and a sample with a
    timestamp."""

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeHistogramMetricFamily("queue_ages", "Ages.", labels=["queue"])
        family.add_metric(["a"], [("1.0", 2), ("+Inf", 3)], gsum_value=4.5)
        yield family
        timed = GaugeHistogramMetricFamily("timed", "With a time.")
        timed.add_metric([], [("+Inf", 1)], gsum_value=1, timestamp=1700000000.25)
        yield timed


@pytest.fixture
def created(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Whether counters, histograms and summaries have ``_created`` samples (prometheus-client's switch for
    the whole process, as it was before the test afterwards)."""
    before = prometheus_metrics._use_created
    if request.param:
        enable_created_metrics()
    else:
        disable_created_metrics()
    yield request.param
    prometheus_metrics._use_created = before


def registry() -> CollectorRegistry:
    """Every kind of family, labels with characters that must be escaped, names outside the legacy set."""
    found = CollectorRegistry()
    counter = Counter("requests", "Requests\nwith \\ a help that needs escaping.", ["route", "code"], registry=found)
    counter.labels('/a"b', "200").inc(3)
    counter.labels("back\\slash\nnew line", "500").inc(0.5)
    Gauge("in_flight", "Now.", registry=found).set(1e22)
    gauge = Gauge("odd.name", "A name outside the legacy set.", ["label.with.dots"], registry=found)
    gauge.labels("x").set(-1.5)
    histogram = Histogram("seconds", "Seconds.", ["route"], buckets=(0.001, 0.1, 1.0), registry=found)
    for value in (0.0005, 0.05, 0.5, 5.0):
        histogram.labels("/r").observe(value)
    Summary("sizes", "Sizes.", registry=found).observe(12)
    Info("build", "The build.", registry=found).info({"version": "1.2.3", "quote": 'a"b'})
    Enum("state", "State.", states=["up", "down"], registry=found).state("down")
    Gauge("nan_and_inf", "Specials.", ["which"], registry=found).labels("nan").set(float("nan"))
    GCCollector(registry=found)
    PlatformCollector(registry=found)
    found.register(Fixed())
    return found


@pytest.mark.parametrize("created", [False, True], ids=["created samples off", "created samples on"], indirect=True)
@pytest.mark.parametrize("escaping", [UNDERSCORES, ALLOWUTF8, DOTS, VALUES])
def test_the_text_is_the_libraries_own(escaping: str, created: bool) -> None:
    found = registry()
    gc.disable()  # the registry's GC collector counts collections: none may run between the two writes
    try:
        text = b"".join(families(found, escaping))
        assert text == generate_latest(found, escaping)
    finally:
        gc.enable()
    assert (b"created" in text) == created


def test_the_process_collector_and_an_empty_registry_too() -> None:
    class Frozen(Collector):
        def __init__(self) -> None:
            self.metrics = list(ProcessCollector(registry=None).collect())

        def collect(self):  # type: ignore[no-untyped-def]
            return iter(self.metrics)

    found = CollectorRegistry()
    found.register(Frozen())
    assert b"".join(families(found)) == generate_latest(found)
    assert b"".join(families(CollectorRegistry())) == generate_latest(CollectorRegistry()) == b""


@pytest.mark.parametrize("created", [False, True], ids=["created samples off", "created samples on"], indirect=True)
def test_a_large_family_comes_in_parts_of_a_few_lines_and_the_same_text(created: bool) -> None:
    found = CollectorRegistry()
    histogram = Histogram("seconds", "Seconds.", ["route"], buckets=tuple(range(1, 40)), registry=found)
    for route in ("/a", "/b", "/c"):
        histogram.labels(route).observe(3)
    parts = list(families(found))
    assert len(parts) > 3 * 40 / PART_LINES
    assert all(part.count(b"\n") <= PART_LINES for part in parts)
    assert b"".join(parts) == generate_latest(found)
