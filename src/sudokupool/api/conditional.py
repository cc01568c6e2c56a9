"""Conditional requests (RFC 9110, 13): the one ETag comparison the API and the page both use."""

from __future__ import annotations


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison of an ``If-None-Match`` header against one ETag (RFC 9110, 13.1.2)."""
    if if_none_match.strip() == "*":
        return True
    opaque = etag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == opaque for part in if_none_match.split(","))
