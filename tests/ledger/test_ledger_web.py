"""The web page's Forward view: each policy's forward equity from the scored ledger, by mode."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from ledger_testing import FIRST_DECISION, after_close, invoke, set_clock

from stocker_core.config import get_settings
from stocker_core.market.clock import next_session
from stocker_core.web.app import create_web_app


def test_the_forward_view_says_what_to_do_before_any_scoring(aapl_home):
    client = TestClient(create_web_app(get_settings(), api_key=""))
    data = client.get("/web/api/forward").json()
    assert data["modes"] == {} and "stocker ledger record" in data["empty"]


def test_the_forward_view_shows_each_policy_equity(aapl_home, monkeypatch):
    day = FIRST_DECISION
    for _ in range(5):
        set_clock(monkeypatch, after_close(day))
        assert invoke("record", "--policies", "macd,zmr").exit_code == 0
        day = next_session(day)
    settings = set_clock(monkeypatch, after_close(day))
    assert invoke("score").exit_code == 0
    client = TestClient(create_web_app(settings, api_key=""))
    page = client.get("/web/forward")
    assert page.status_code == 200 and "Forward record" in page.text and "static/forward.js" in page.text
    data = client.get("/web/api/forward").json()
    assert data["empty"] is None and list(data["modes"]) == ["replayed"]
    replayed = data["modes"]["replayed"]
    assert len(replayed["sessions"]) == 5 and replayed["sessions"][0] == str(next_session(FIRST_DECISION))
    assert set(replayed["equity"]) == {"buy_and_hold", "macd", "zmr"}
    assert replayed["equity"]["buy_and_hold"] == pytest.approx(replayed["benchmark"])
    for row in data["record"]:
        final = replayed["equity"][row["policy"]][-1]
        assert final == pytest.approx(1.0 + row["cumulative_return"], abs=1e-12)
