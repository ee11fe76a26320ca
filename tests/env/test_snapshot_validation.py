"""``restore`` checks a snapshot against the episode's own invariants by replaying its
actions: NaN cash, a short position, absurd magnitudes and forged rewards are refused and the
environment keeps its state; an honest snapshot restores exactly (issue 22, defect 5)."""

from __future__ import annotations

import copy
import json

import pytest
from fastapi.testclient import TestClient

from stocker_core.env.actions import Action
from stocker_core.env.environment import SnapshotError, TradingEnv
from stocker_core.env.episode import episode_from_closes

CLOSES = [100.0, 101.0, 99.5, 102.0, 104.0, 103.0, 105.0, 107.5, 106.0, 108.0]


@pytest.fixture
def played() -> tuple[TradingEnv, dict]:
    env = TradingEnv(episode_from_closes(CLOSES))
    env.reset()
    for action in (Action.buy(10), Action.hold(), Action.sell(4), Action.sell(500), Action.buy(3)):
        env.step(action)
    # through JSON, as a client sends it
    return env, json.loads(json.dumps(env.snapshot()))


def _forged(snapshot: dict, **changes) -> dict:
    forged = copy.deepcopy(snapshot)
    for path, value in changes.items():
        target, *rest = path.split("__")
        if rest:
            forged[target][int(rest[0])] = value
        else:
            forged[target] = value
    return forged


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"cash": float("nan")}, "cash must be a finite number"),
        ({"cash": 1e300}, "cash"),
        ({"cash": -5.0}, "cash"),
        ({"position": -3}, "position"),
        ({"position": 10**12}, "position"),
        ({"position": 2.5}, "position must be a whole number"),
        ({"peak": float("inf")}, "peak must be a finite number"),
        ({"max_drawdown": 0.0}, "max_drawdown"),
        ({"rewards__0": 50.0}, "rewards"),
        ({"rewards__4": -1e9}, "rewards"),
        ({"invalid_count": 0}, "invalid_count"),
        ({"done": True}, "done"),
        ({"step": 99}, "outside 0..10"),
        ({"step": float("inf")}, "step must be a whole number"),
        ({"position": float("nan")}, "position must be a whole number"),
        ({"invalid_count": 1e400}, "invalid_count must be a whole number"),
        ({"step": 4}, "one entry per step"),
        ({"actions__0": [1, -4]}, "malformed snapshot"),
        ({"actions__0": [7, 1]}, "malformed snapshot"),
    ],
)
def test_a_forged_snapshot_is_refused_and_the_state_kept(played, changes, words):
    env, snapshot = played
    forged = _forged(snapshot, **changes)
    before = env.snapshot()
    with pytest.raises(SnapshotError, match=words):
        env.restore(forged)
    assert env.snapshot() == before


def test_forged_reward_terms_are_refused(played):
    env, snapshot = played
    forged = copy.deepcopy(snapshot)
    forged["breakdowns"][2]["perf"] += 1.0
    with pytest.raises(SnapshotError, match="breakdowns"):
        env.restore(forged)


def test_an_honest_snapshot_restores_exactly_even_in_a_fresh_environment(played):
    env, snapshot = played
    fresh = TradingEnv(episode_from_closes(CLOSES))
    fresh.reset()
    fresh.restore(snapshot)
    assert fresh.snapshot() == env.snapshot()
    tail = [Action.buy(2), Action.hold()]
    assert [fresh.step(a).reward for a in tail] == [env.step(a).reward for a in tail]
    # a start-of-episode snapshot is honest too
    start = TradingEnv(episode_from_closes(CLOSES))
    start.reset()
    fresh.restore(start.snapshot())
    assert fresh.t == 0 and fresh.portfolio.cash == 10_000.0


def test_the_server_answers_a_forged_snapshot_with_a_422(seed_settings):
    from stocker_core.env.server import create_app

    client = TestClient(create_app(seed_settings, api_key=""))
    sid = client.post("/reset", json={"task_id": "task_easy"}).json()["session_id"]
    client.post("/step", json={"side": "buy", "quantity": 5}, headers={"X-Session-Id": sid})
    snapshot = client.get("/snapshot", headers={"X-Session-Id": sid}).json()
    for forged in (
        {**snapshot, "cash": 1e12},
        {**snapshot, "position": -5},
        {**snapshot, "rewards": [9.0]},
        # NaN is not JSON: the body parser refuses it first (400)
    ):
        answer = client.post("/restore", json=forged, headers={"X-Session-Id": sid})
        assert answer.status_code == 422 and "snapshot" in answer.json()["error"], answer.text
    nan = json.dumps(snapshot).replace(f'"cash": {json.dumps(snapshot["cash"])}', '"cash": NaN')
    answer = client.post("/restore", content=nan, headers={"X-Session-Id": sid})
    assert answer.status_code == 400
    assert client.get("/snapshot", headers={"X-Session-Id": sid}).json() == snapshot
    ok = client.post("/restore", json=snapshot, headers={"X-Session-Id": sid})
    assert ok.status_code == 200
