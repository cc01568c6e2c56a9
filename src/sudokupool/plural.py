"""Counts in the commands' reports, with the noun in the number it takes: ``1 bad line``, ``2 bad lines``."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` (``plural``, by default ``noun`` + ``s``, for any count but 1), with thousands
    separated by commas past 9,999 as elsewhere in the reports."""
    number = f"{count:,}" if count > 9999 else str(count)
    return f"{number} {noun if count == 1 else plural or noun + 's'}"
