"""Play sessions belong to the client that opened them (issue 52): from 127.0.0.4, every route
that reads or changes 127.0.0.3's session (state, step, run, reset, close, and ``replaces`` on a
new one) is refused with 409 and leaves the session as it was. Before the fix only DELETE checked
the owner: step and reset answered 200. The live-server cases are in ``test_peer_addresses.py``."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from stocker_core.web.app import create_web_app

KEY = "SYN|2015-03-01"
HOLD = {"side": "hold", "quantity": 0}


@pytest.fixture(scope="module")
def app(tiny):
    return create_web_app(tiny.settings, api_key="")


def _owned(app) -> tuple[TestClient, str]:
    owner = TestClient(app, client=("127.0.0.3", 50000))
    started = owner.post("/web/api/play", json={"episode": KEY, "policy": "buy_and_hold"})
    assert started.status_code == 200, started.text
    sid = started.json()["state"]["session_id"]
    assert owner.post(f"/web/api/play/{sid}/step", json=HOLD).status_code == 200
    return owner, sid


ROUTES = [
    ("get", "", None),
    ("post", "/step", HOLD),
    ("post", "/step", None),
    ("post", "/run", None),
    ("post", "/reset", None),
    ("delete", "", None),
]


@pytest.mark.parametrize(("method", "tail", "body"), ROUTES, ids=[f"{m}{t or ' '}" for m, t, _ in ROUTES])
def test_another_client_cannot_read_or_change_a_session(app, method, tail, body) -> None:
    owner, sid = _owned(app)
    before = owner.get(f"/web/api/play/{sid}").json()
    stranger = TestClient(app, client=("127.0.0.4", 50000))
    kwargs = {"json": body} if body is not None else {}
    answer = stranger.request(method.upper(), f"/web/api/play/{sid}{tail}", **kwargs)
    assert answer.status_code == 409, answer.text
    assert "belongs to another client" in answer.json()["error"]
    assert "steps" not in answer.json()  # nothing of the session leaks
    after = owner.get(f"/web/api/play/{sid}")
    assert after.status_code == 200 and after.json() == before
    assert owner.post(f"/web/api/play/{sid}/step", json=HOLD).status_code == 200


def test_replacing_another_clients_session_leaves_it_open(app) -> None:
    owner, sid = _owned(app)
    stranger = TestClient(app, client=("127.0.0.4", 50000))
    mine = stranger.post("/web/api/play", json={"episode": KEY, "replaces": sid})
    assert mine.status_code == 200
    assert owner.get(f"/web/api/play/{sid}").status_code == 200
    assert stranger.get(f"/web/api/play/{sid}").status_code == 409


def test_the_owner_still_does_everything(app) -> None:
    owner, sid = _owned(app)
    assert owner.post(f"/web/api/play/{sid}/reset").status_code == 200
    assert owner.post(f"/web/api/play/{sid}/run").status_code == 200
    assert owner.get(f"/web/api/play/{sid}").json()["done"] is True
    assert owner.delete(f"/web/api/play/{sid}").status_code == 200
    assert owner.get(f"/web/api/play/{sid}").status_code == 404


def test_an_ipv4_mapped_address_is_the_same_client(app) -> None:
    """A dual-stack server sees 127.0.0.3 as ``::ffff:127.0.0.3``: one client, either way."""
    _, sid = _owned(app)
    mapped = TestClient(app, client=("::ffff:127.0.0.3", 50000))
    assert mapped.get(f"/web/api/play/{sid}").status_code == 200
    other = TestClient(app, client=("::ffff:127.0.0.4", 50000))
    assert other.get(f"/web/api/play/{sid}").status_code == 409
