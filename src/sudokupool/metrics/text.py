"""Prometheus's text format, byte for byte as prometheus-client's ``generate_latest`` writes it, one metric family
at a time.

The library checks every label name of every sample against regular expressions, and that was most of a scrape's
time, which runs on the worker's event loop. Here each name is checked once (the checks are the library's, their
answers cached: names come from the code, a small closed set); the rest of a sample's line is plain string work.
A sample line's name and labels are made once for each label set (a small closed set too) and kept. The text comes
out in parts of at most :data:`PART_LINES` lines, so that the metrics port can let the loop serve requests between
them (:mod:`sudokupool.metrics.endpoint`).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Final

from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

#: The escaping of the text format's default version (0.0.4), as ``generate_latest`` has it.
UNDERSCORES = openmetrics.UNDERSCORES
#: Lines in one part of the text at most (a family's ``# HELP`` and ``# TYPE`` count).
PART_LINES: Final = 16
#: Samples of OpenMetrics only, written after their family as a gauge of their own (``generate_latest`` does).
_OPENMETRICS_SUFFIXES = ("_created", "_gsum", "_gcount")
#: The type a family is written with, where it is not its own.
_TYPES = {"info": "gauge", "stateset": "gauge", "gaugehistogram": "histogram", "unknown": "untyped"}


@lru_cache(maxsize=1024)
def _metric_name(name: str, escaping: str) -> str:
    return openmetrics.escape_metric_name(name, escaping)


@lru_cache(maxsize=1024)
def _label_name(name: str, escaping: str) -> str:
    return openmetrics.escape_label_name(name, escaping)


@lru_cache(maxsize=1024)
def _legacy_name(name: str) -> bool:
    # Escaped for UTF-8, a name is quoted exactly when it is outside the legacy character set.
    return not openmetrics.escape_metric_name(name, openmetrics.ALLOWUTF8).startswith('"')


def _value(value: float) -> str:
    text: str = floatToGoString(value)  # type: ignore[no-untyped-call]
    return text


def _label_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _help(name: str, documentation: str, escaping: str) -> str:
    text = documentation.replace("\\", r"\\").replace("\n", r"\n")
    return f"# HELP {_metric_name(name, escaping)} {text}\n"


@lru_cache(maxsize=4096)
def _line_start(name: str, labels: tuple[tuple[str, str], ...], escaping: str) -> str:
    """A sample's line up to its value: its name and its labels (sorted, escaped), and the space after them."""
    labelstr = ",".join(f'{_label_name(k, escaping)}="{_label_value(v)}"' for k, v in sorted(labels))
    if escaping != openmetrics.ALLOWUTF8 or _legacy_name(name):
        braces = f"{{{labelstr}}}" if labelstr else ""
        return f"{_metric_name(name, escaping)}{braces} "
    comma = "," if labelstr else ""
    return f"{{{_metric_name(name, escaping)}{comma}{labelstr}}} "


def _sample_line(name: str, labels: dict[str, str], value: float, timestamp: object, escaping: str) -> str:
    stamp = "" if timestamp is None else f" {int(float(timestamp) * 1000):d}"  # type: ignore[arg-type]
    return f"{_line_start(name, tuple(labels.items()), escaping)}{_value(value)}{stamp}\n"


def family_parts(metric: Metric, escaping: str = UNDERSCORES) -> Iterator[str]:
    """One metric family's lines (its ``# HELP``, ``# TYPE`` and samples, as ``generate_latest`` writes them), in
    parts of at most :data:`PART_LINES` lines."""
    name, kind = metric.name, metric.type
    if kind == "counter":
        name += "_total"
    elif kind == "info":
        name += "_info"
    kind = _TYPES.get(kind, kind)
    lines = [_help(name, metric.documentation, escaping), f"# TYPE {_metric_name(name, escaping)} {kind}\n"]
    extra: dict[str, list[str]] = {}
    for sample in metric.samples:
        line = _sample_line(sample.name, sample.labels, sample.value, sample.timestamp, escaping)
        for suffix in _OPENMETRICS_SUFFIXES:
            if sample.name == metric.name + suffix:
                extra.setdefault(suffix, []).append(line)
                break
        else:
            lines.append(line)
            if len(lines) >= PART_LINES:
                yield "".join(lines)
                lines = []
    for suffix, more in sorted(extra.items()):
        lines.append(_help(metric.name + suffix, metric.documentation, escaping))
        lines.append(f"# TYPE {_metric_name(metric.name + suffix, escaping)} gauge\n")
        for line in more:
            lines.append(line)
            if len(lines) >= PART_LINES:
                yield "".join(lines)
                lines = []
    if lines:
        yield "".join(lines)


def families(registry: Collector, escaping: str = UNDERSCORES) -> Iterator[bytes]:
    """The text format of ``registry``'s metrics in parts, a family or :data:`PART_LINES` lines of one at a time
    (their concatenation is the whole body)."""
    for metric in registry.collect():
        for part in family_parts(metric, escaping):
            yield part.encode()
