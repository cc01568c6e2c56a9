"""Conditional requests (RFC 9110, 13): the one ETag comparison the API and the page both use, and the API's
check of a request against the ETag it would answer with."""

from __future__ import annotations

from starlette.types import Scope

from sudokupool.api.query import header


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison of an ``If-None-Match`` header against one ETag (RFC 9110, 13.1.2)."""
    if if_none_match.strip() == "*":
        return True
    opaque = etag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == opaque for part in if_none_match.split(","))


def not_modified(scope: Scope, etag: str) -> bool:
    """Whether the request's ``If-None-Match`` matches ``etag``: the client has the body already (a 304)."""
    if_none_match = header(scope, b"if-none-match")
    return if_none_match is not None and etag_matches(if_none_match, etag)
