"""Who a request comes from: the client address that owns a play session and counts against its
quota. It is the connection's peer (``request.client``), never a header: ``X-Forwarded-For``
reaches it only through uvicorn's proxy middleware, for proxies the operator names
(``stocker web --forwarded-allow-ips``: ``stocker_core.web.proxies``)."""

from __future__ import annotations

import ipaddress

from starlette.requests import HTTPConnection


def canonical(host: str | None) -> str | None:
    """One spelling per address: an IPv4-mapped IPv6 address (``::ffff:127.0.0.3``, what a
    dual-stack socket reports) as its IPv4 address, IPv6 compressed and lower-case; a name
    that is not an address (a test client's ``testclient``) as given."""
    if host is None:
        return None
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def client_of(connection: HTTPConnection) -> str | None:
    """The client address of a request (None when the server gives none)."""
    return canonical(connection.client.host if connection.client else None)
