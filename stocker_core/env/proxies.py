"""Which proxies' ``X-Forwarded-For`` the servers believe: none unless the operator names them
(``stocker serve --forwarded-allow-ips``, ``stocker web`` likewise), then uvicorn's own proxy
middleware rewrites the client to the address the nearest named proxy appended. uvicorn alone
trusts 127.0.0.1 (or its ``FORWARDED_ALLOW_IPS``), so any local process could name itself
another client: ``uvicorn_run`` turns that off."""

from __future__ import annotations

import ipaddress
from typing import Any

from stocker_core.env.server_guards import ServerConfigError

ANY_PROXY = "*"


def trusted_proxies(value: str | None) -> list[str]:
    """The proxies named in ``value`` (comma-separated addresses or networks, or ``*`` for any
    peer), each checked; an empty list for None or blank. ServerConfigError for anything else."""
    names = [part.strip() for part in (value or "").split(",") if part.strip()]
    for name in names:
        if name == ANY_PROXY:
            continue
        try:
            ipaddress.ip_network(name, strict=False)
        except ValueError:
            raise ServerConfigError(
                f"--forwarded-allow-ips: {name!r} is not an IP address or network "
                "(e.g. 127.0.0.1, 10.0.0.0/8, ::1; '*' trusts every peer)"
            ) from None
    return names


def proxy_options(value: str | None) -> dict[str, Any]:
    """uvicorn's ``proxy_headers`` and ``forwarded_allow_ips`` for the proxies named in ``value``:
    off when none are named (``FORWARDED_ALLOW_IPS`` in the environment then changes nothing)."""
    proxies = trusted_proxies(value)
    if not proxies:
        return {"proxy_headers": False, "forwarded_allow_ips": None}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(proxies)}


def uvicorn_run(app: Any, host: str, port: int, forwarded_allow_ips: str | None, **options: Any) -> None:
    """Serve ``app`` with uvicorn (blocking), believing only the named proxies' headers."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, **proxy_options(forwarded_allow_ips), **options)
