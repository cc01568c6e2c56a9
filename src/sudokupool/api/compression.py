"""Content coding: which clients may have a prepared body gzip-coded (``Accept-Encoding``, RFC 9110).

The bodies themselves are gzip members (:mod:`sudokupool.pool.gzip_member`): sent as they are to a
client that takes gzip, inflated per request for one that does not; :func:`record_body` makes that choice for
one of the pool's records.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from starlette.types import Scope

from sudokupool.api.errors import ApiError
from sudokupool.api.query import Header, header
from sudokupool.pool.pool import DamagedRecord, Pool

GZIP: Final[Header] = (b"content-encoding", b"gzip")
#: On every response whose encoding was negotiated, identity ones too, so shared caches key by it.
VARY: Final[Header] = (b"vary", b"Accept-Encoding")
DAMAGED: Final = "this puzzle's record is damaged in the served pack"
_GZIPPED: Final[tuple[Header, ...]] = (GZIP,)
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110, 12.4.2: a qvalue has at most three decimals and is at most 1.
_QVALUE: Final = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")


def _element(element: str) -> tuple[str, float] | None:
    """A coding (lower case) and its q, or None for an element that does not parse."""
    coding, *parameters = element.split(";")
    coding = coding.strip().lower()
    if not _TOKEN.fullmatch(coding):
        return None
    q = 1.0
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            value = value.strip()
            if not _QVALUE.fullmatch(value):
                return None
            q = float(value)
    return coding, q


@lru_cache(maxsize=64)
def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether a response may be gzip-coded for this ``Accept-Encoding`` value (RFC 9110, 12.5.3).

    ``accept_encoding`` is every header line of the request joined with ", ", or None without one.
    gzip is acceptable when named (as ``gzip`` or its alias ``x-gzip``, names in any case) or matched
    by ``*``, with q > 0; it is chosen unless identity is preferred (given a higher q, by name or by
    ``*``). No header or an empty one means identity: a client that sends none, such as curl without
    ``--compressed``, reads plain JSON. When neither is acceptable (``gzip;q=0, identity;q=0``) the
    response is identity, as 12.5.3 says a server should do. An element that does not parse (a bad
    q) is ignored. The cache is small and bounded: a few values (those of browsers and the common
    libraries) make nearly all requests.
    """
    if not accept_encoding:
        return False
    weights: dict[str, float] = {}
    for element in accept_encoding.split(","):
        if not element.strip():
            continue
        parsed = _element(element)
        if parsed is not None:
            coding, q = parsed
            weights[coding] = max(q, weights.get(coding, 0.0))
    # "gzip" named explicitly wins over its alias "x-gzip", and either over "*".
    star = weights.get("*")
    gzip_q = weights.get("gzip", weights.get("x-gzip", star))
    if not gzip_q:
        return False
    # Identity, named or matched by "*", may be preferred; not named at all, it is the fallback.
    identity_q = weights.get("identity", star)
    return identity_q is None or gzip_q >= identity_q


def gzip_accepted(scope: Scope) -> bool:
    """Whether the client takes a gzip-coded body (see :func:`accepts_gzip`)."""
    return accepts_gzip(header(scope, b"accept-encoding"))


def record_body(scope: Scope, pool: Pool, index: int) -> tuple[tuple[Header, ...], bytes]:
    """Puzzle ``index``'s record for this client: the coding header (none for identity) and the body, the gzip
    member as held or inflated. A damaged record is a 500 (:data:`DAMAGED`), logged once by the pool."""
    try:
        if gzip_accepted(scope):
            return _GZIPPED, pool.gzip_body(index)
        return (), pool.body(index)
    except DamagedRecord:
        raise ApiError(DAMAGED, status=500) from None
