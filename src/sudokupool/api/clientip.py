"""Who the client is: the TCP peer, or the address the trusted proxies in front of us saw.

Forwarding headers are interpreted here and only here: uvicorn runs with ``--no-proxy-headers``
(``proxy_headers=False``), so ``scope["client"]`` arrives as the TCP peer and
:meth:`ClientAddresses.apply` replaces it with the resolved client, which uvicorn's access log then shows.

With ``SUDOKUPOOL_TRUSTED_PROXY_HOPS=N`` (N > 0) each of the N proxies appends the address of its
own peer to ``X-Forwarded-For`` (all such headers are read, in order, as one list). The client is
therefore the N-th entry from the *right*; everything to its left was written by the client and
is ignored. Where the list is shorter than N (the request passed fewer proxies than configured),
the leftmost entry is used: every entry present was still appended by a trusted proxy. Where the
chosen entry is not an IP address (``unknown``, garbage), or the header is missing, the TCP peer
is used: never anything the client wrote.

The limiter counts IPv4 clients per address and IPv6 clients per /64 (one customer's allocation;
counting single IPv6 addresses would let a client rotate through 2^64 of them). The identity is
stored in ``scope[CLIENT_ID]``.
"""

from __future__ import annotations

import ipaddress
import logging
from functools import lru_cache

from starlette.types import Scope

#: The scope key holding the limiter identity of the client: an IPv4 address or an IPv6 ``/64``.
CLIENT_ID = "sudokupool.client_id"

_UNKNOWN = ("unknown", "unknown")

logger = logging.getLogger("sudokupool.clientip")


#: Longer than any textual IP this module accepts: ``[`` + the longest IPv6 form (45) with a zone id
#: + ``]:65535``. Anything longer is not an address, and is refused before the cache sees it.
MAX_ADDRESS_LENGTH = 100


def parse_address(text: str) -> tuple[str, str] | None:
    """``(address, identity)`` for a textual IP (optionally ``v4:port`` or ``[v6]:port``), else None."""
    text = text.strip()
    if len(text) > MAX_ADDRESS_LENGTH:
        return None
    return _parse_address(text)


# Bounded twice: in entries, and (by parse_address) in the length of each key, so the strings clients
# write in X-Forwarded-For cost at most 4096 x 100 characters here.
@lru_cache(maxsize=4096)
def _parse_address(text: str) -> tuple[str, str] | None:
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        text = text[1:end]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        else:
            network = ipaddress.IPv6Network((int(ip) >> 64 << 64, 64))
            return str(ip), str(network)
    address = str(ip)
    return address, address


def resolve(headers: list[tuple[bytes, bytes]], peer: str | None, trusted_hops: int) -> tuple[str, str]:
    """``(client address, limiter identity)`` from the request headers and the TCP peer address."""
    if trusted_hops > 0:
        forwarded = [value for name, value in headers if name == b"x-forwarded-for"]
        if forwarded:
            entries = b",".join(forwarded).decode("latin-1").split(",")
            chosen = entries[-trusted_hops] if len(entries) >= trusted_hops else entries[0]
            parsed = parse_address(chosen)
            if parsed is not None:
                return parsed
    if peer is None:
        return _UNKNOWN
    # A peer that is not an IP (a unix socket, a test client name) is still a stable identity.
    return parse_address(peer) or (peer, peer)


def client_id(scope: Scope) -> str:
    """The limiter identity of the request: set by :class:`ClientAddresses`, else from the TCP peer."""
    identity = scope.get(CLIENT_ID)
    if identity is None:
        client = scope.get("client")
        identity = resolve([], client[0] if client else None, 0)[1]
    return str(identity)


#: Requests a process looks at for an ``X-Forwarded-For`` that no trusted hop explains (see
#: :class:`ClientAddresses`): a proxy in front sends it on every request, so the first ones show it.
UNTRUSTED_FORWARD_CHECKS = 10_000


class ClientAddresses:
    """Resolves each request's client (asked by :class:`~sudokupool.api.front.Front`, not a middleware layer).

    With no trusted hop (``SUDOKUPOOL_TRUSTED_PROXY_HOPS=0``), the first request that carries
    ``X-Forwarded-For`` is logged once per process as a WARNING: a proxy is probably in front, and every
    client is then counted as the proxy's address. The headers are looked at only until that warning, and
    in the first :data:`UNTRUSTED_FORWARD_CHECKS` requests; after that the cost is a counter's test.
    """

    def __init__(self, *, trusted_hops: int = 0) -> None:
        self.trusted_hops = trusted_hops
        self.checks_left = UNTRUSTED_FORWARD_CHECKS if trusted_hops == 0 else 0

    def apply(self, scope: Scope) -> None:
        """Set ``scope["client"]`` to the resolved client and ``scope[CLIENT_ID]`` to its limiter identity."""
        client = scope.get("client")
        peer = client[0] if client else None
        if self.checks_left:
            self.check_forwarded(scope["headers"], peer)
        address, identity = resolve(scope["headers"], peer, self.trusted_hops)
        if self.trusted_hops and address != peer:
            # The port of a forwarded client is unknown; 0 says so (as uvicorn's proxy middleware does).
            scope["client"] = (address, 0)
        scope[CLIENT_ID] = identity

    def check_forwarded(self, headers: list[tuple[bytes, bytes]], peer: str | None) -> None:
        self.checks_left -= 1
        for name, _ in headers:
            if name == b"x-forwarded-for":
                self.checks_left = 0
                logger.warning(
                    "a request from %s carries X-Forwarded-For, but SUDOKUPOOL_TRUSTED_PROXY_HOPS=0: clients are "
                    "identified (and rate-limited) by the address of the peer, the proxy if there is one; set "
                    "SUDOKUPOOL_TRUSTED_PROXY_HOPS to the number of proxies in front of the service "
                    "(logged once per process)",
                    peer or "an unknown peer",
                    extra={"peer": peer},
                )
                return
