"""A client is its connection's address, on a live server (issue 52): ``stocker serve`` and
``stocker web`` in a child process, reached from 127.0.0.3, 127.0.0.4 and 127.0.0.1 (httpx's
``local_address``; the server binds 127.0.0.1, which all of 127.0.0.0/8 reaches on Linux).

Before the fix uvicorn trusted ``X-Forwarded-For`` from 127.0.0.1 (its default), so any local
process could name itself another client: a spoofed header closed another client's play session
and restarted its environment session, and 300 resets with made-up addresses filled the server
and locked a real client out with 429. Now the header counts only from the proxies the
operator names (``--forwarded-allow-ips``), and then only the address its proxy appended."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from browser_testing import live_server

KEY = "SYN|2015-03-01"
HOLD = {"side": "hold", "quantity": 0}
SPOOFS = [
    {"X-Forwarded-For": "127.0.0.3"},
    {"x-forwarded-for": "127.0.0.3"},
    {"X-FORWARDED-FOR": "127.0.0.3"},
    {"X-Forwarded-For": "10.0.0.9, 127.0.0.3"},
    {"X-Forwarded-For": "127.0.0.3, 127.0.0.3"},
    {"X-Forwarded-For": "::ffff:127.0.0.3"},
    {"X-Forwarded-For": "127.0.0.3:5000"},
    {"Forwarded": "for=127.0.0.3", "X-Real-IP": "127.0.0.3"},
]


@contextmanager
def from_address(url: str, address: str) -> Iterator[httpx.Client]:
    """A client on ``url`` whose connections leave from ``address``."""
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(base_url=url, transport=transport, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def served(tiny) -> Iterator[str]:
    with live_server(tiny.settings, "", "--max-sessions", "6", "--max-sessions-per-client", "2") as url:
        yield url


def _play(client: httpx.Client) -> str:
    started = client.post("/web/api/play", json={"episode": KEY, "policy": "buy_and_hold"})
    assert started.status_code == 200, started.text
    return started.json()["state"]["session_id"]


def test_the_play_routes_of_another_address_are_refused(served) -> None:
    with from_address(served, "127.0.0.3") as owner, from_address(served, "127.0.0.4") as stranger:
        sid = _play(owner)
        assert owner.post(f"/web/api/play/{sid}/step", json=HOLD).status_code == 200
        before = owner.get(f"/web/api/play/{sid}").json()
        for method, tail, body in [
            ("GET", "", None),
            ("POST", "/step", HOLD),
            ("POST", "/run", None),
            ("POST", "/reset", None),
            ("DELETE", "", None),
        ]:
            answer = stranger.request(method, f"/web/api/play/{sid}{tail}", json=body)
            assert answer.status_code == 409, (method, tail, answer.text)
        assert owner.get(f"/web/api/play/{sid}").json() == before


@pytest.mark.parametrize("headers", SPOOFS, ids=[" ".join(f"{k}={v}" for k, v in h.items()) for h in SPOOFS])
def test_a_spoofed_header_does_not_make_another_client(served, headers) -> None:
    with from_address(served, "127.0.0.3") as owner, from_address(served, "127.0.0.1") as local:
        sid = _play(owner)
        env_sid = owner.post("/reset", json={"episode": KEY}).json()["session_id"]
        try:
            for method, tail in [("GET", ""), ("POST", "/reset"), ("DELETE", "")]:
                answer = local.request(method, f"/web/api/play/{sid}{tail}", headers=headers)
                assert answer.status_code == 409, (method, tail, answer.text)
            taken = local.post("/reset", json={"episode": KEY, "session_id": env_sid}, headers=headers)
            assert taken.status_code == 409, taken.text
            assert owner.get(f"/web/api/play/{sid}").status_code == 200
        finally:
            owner.delete(f"/web/api/play/{sid}")
            owner.delete("/session", headers={"X-Session-Id": env_sid})


def test_made_up_addresses_do_not_fill_the_server(served) -> None:
    """``--max-sessions 6 --max-sessions-per-client 2``: 30 resets, each naming another address,
    are one client's (2 started, 28 refused); a real client still starts its own."""
    with from_address(served, "127.0.0.1") as local, from_address(served, "127.0.0.4") as real:
        answers = [
            local.post("/reset", json={"episode": KEY}, headers={"X-Forwarded-For": f"10.0.{i}.1"})
            for i in range(30)
        ]
        started = [a.json()["session_id"] for a in answers if a.status_code == 200]
        assert len(started) == 2 and [a.status_code for a in answers].count(429) == 28
        mine = real.post("/reset", json={"episode": KEY})
        assert mine.status_code == 200, mine.text
        for sid in [*started, mine.json()["session_id"]]:
            owner = real if sid == mine.json()["session_id"] else local
            assert owner.delete("/session", headers={"X-Session-Id": sid}).status_code == 200


def test_made_up_addresses_do_not_fill_the_page(served) -> None:
    """The page holds 64 play sessions, 16 per client: 70 plays naming 70 addresses are one
    client's (its own oldest closed to make room), so another client still plays."""
    with from_address(served, "127.0.0.1") as local, from_address(served, "127.0.0.4") as real:
        for i in range(70):
            answer = local.post(
                "/web/api/play", json={"episode": KEY}, headers={"X-Forwarded-For": f"10.1.{i}.1"}
            )
            assert answer.status_code == 200, answer.text
        assert real.post("/web/api/play", json={"episode": KEY}).status_code == 200


def test_stocker_web_trusts_no_header_either(tiny) -> None:
    with (
        live_server(tiny.settings, command="web") as url,
        from_address(url, "127.0.0.3") as owner,
        from_address(url, "127.0.0.1") as local,
    ):
        sid = _play(owner)
        spoofed = local.delete(f"/web/api/play/{sid}", headers={"X-Forwarded-For": "127.0.0.3"})
        assert spoofed.status_code == 409, spoofed.text
        assert owner.get(f"/web/api/play/{sid}").status_code == 200


def test_a_named_proxy_is_believed_and_no_one_else(tiny) -> None:
    """``--forwarded-allow-ips 127.0.0.1``: requests through 127.0.0.1 are the client its
    header names last (the address the proxy appended); 127.0.0.3's header is ignored."""
    with (
        live_server(tiny.settings, "", "--forwarded-allow-ips", "127.0.0.1") as url,
        from_address(url, "127.0.0.1") as proxy,
        from_address(url, "127.0.0.3") as direct,
    ):
        sid = _play_as(proxy, "10.9.9.9")
        for forwarded in ("10.9.9.9", "10.9.9.8, 10.9.9.9"):  # the client may write one; the proxy adds one
            answer = proxy.get(f"/web/api/play/{sid}", headers={"X-Forwarded-For": forwarded})
            assert answer.status_code == 200, forwarded
        for other in ("10.9.9.8", "10.9.9.9, 10.9.9.8"):
            answer = proxy.get(f"/web/api/play/{sid}", headers={"X-Forwarded-For": other})
            assert answer.status_code == 409, other
        assert proxy.get(f"/web/api/play/{sid}").status_code == 409  # the proxy itself is not the client
        answer = direct.get(f"/web/api/play/{sid}", headers={"X-Forwarded-For": "10.9.9.9"})
        assert answer.status_code == 409


def _play_as(client: httpx.Client, forwarded_for: str) -> str:
    started = client.post("/web/api/play", json={"episode": KEY}, headers={"X-Forwarded-For": forwarded_for})
    assert started.status_code == 200, started.text
    return started.json()["state"]["session_id"]


def test_on_ipv6_loopback_a_header_names_no_one_either(tiny) -> None:
    """``--host ::1``: plays sent from ::1 naming other addresses (IPv4, IPv6, ::1 itself) are
    all ::1's, and ::1's header naming 127.0.0.3 does not reach 127.0.0.3's session."""
    with live_server(tiny.settings, host="::1") as url, from_address(url, "::1") as local:
        sids = [
            _play_as(local, forwarded)
            for forwarded in ("127.0.0.3", "::2", "::ffff:10.0.0.1", "::1", "127.0.0.3, ::2")
        ]
        assert [local.get(f"/web/api/play/{sid}").status_code for sid in sids] == [200] * len(sids)
