"""The compare view names clones: a policy whose numbers equal another's on every window (or, for
one episode, on every day) reads "ppo = hold" and is listed under the table."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from web_testing import KEY, copy_tiny_home

from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.steps import compute_and_store_splits, rolling_evaluation
from stocker_core.web.app import create_web_app


@pytest.fixture(scope="module")
def cloned(tmp_path_factory, tiny_template) -> TestClient:
    """The tiny home with a rolling evaluation, and ``ppo`` stored as a copy of ``hold``."""
    tiny = copy_tiny_home(tiny_template, tmp_path_factory.mktemp("clones") / "home")
    compute_and_store_splits(tiny.warehouse)
    config = RollingConfig(window_days=20, step_days=5, resamples=50)
    rolling_evaluation(tiny.settings, tiny.warehouse, ["buy_and_hold", "hold", "random"], config)
    with tiny.warehouse.transaction() as con:
        for table in ("eval.rolling", "eval.backtests", "eval.equity_curves"):
            con.execute(
                f"INSERT INTO {table} SELECT * REPLACE ('ppo' AS policy) FROM {table} WHERE policy = 'hold'"
            )
        con.execute(
            "INSERT INTO eval.rolling_summary SELECT * REPLACE ('ppo' AS policy, 'ppo' AS label) "
            "FROM eval.rolling_summary WHERE policy = 'hold'"
        )
    return TestClient(create_web_app(tiny.settings, api_key=""))


def test_rolling_table_names_the_clone(cloned):
    data = cloned.get("/web/api/compare/rolling").json()
    policies = [row["policy"] for row in data["table"]]
    assert policies == ["buy_and_hold", "hold", "random", "ppo = hold"]
    assert data["clones"] == ["ppo: identical to hold on every window"]


def test_episode_metrics_name_the_clone(cloned):
    data = cloned.get("/web/api/compare/episode", params={"key": KEY}).json()
    labels = {m["policy"]: (m["label"], m["clone_of"]) for m in data["metrics"]}
    assert labels["ppo"] == ("ppo = hold", "hold") and labels["hold"] == ("hold", None)
    assert labels["buy_and_hold"] == ("buy_and_hold", None)
    assert data["clones"] == ["ppo: identical to hold on every day of this episode"]


@pytest.fixture(scope="module")
def two_scopes(tmp_path_factory, tiny_template) -> TestClient:
    """Issue 41: ``ppo`` equals ``a2c`` on every rolling window, where ``a2c`` differs from
    ``buy_and_hold``; on the one stored episode all three have the same curve."""
    tiny = copy_tiny_home(tiny_template, tmp_path_factory.mktemp("scopes") / "home")
    compute_and_store_splits(tiny.warehouse)
    config = RollingConfig(window_days=20, step_days=5, resamples=50)
    rolling_evaluation(tiny.settings, tiny.warehouse, ["buy_and_hold", "hold", "random"], config)
    with tiny.warehouse.transaction() as con:
        for policy in ("a2c", "ppo"):  # a2c's own numbers on the windows, and ppo a copy of them
            con.execute(
                f"INSERT INTO eval.rolling SELECT * REPLACE ('{policy}' AS policy, final_value + 1 AS "
                "final_value) FROM eval.rolling WHERE policy = 'random'"
            )
            con.execute(
                f"INSERT INTO eval.rolling_summary SELECT * REPLACE ('{policy}' AS policy, '{policy}' AS "
                "label) FROM eval.rolling_summary WHERE policy = 'random'"
            )
            for table in ("eval.backtests", "eval.equity_curves"):  # on the episode: buy_and_hold's
                con.execute(
                    f"INSERT INTO {table} SELECT * REPLACE ('{policy}' AS policy) FROM {table} "
                    "WHERE policy = 'buy_and_hold'"
                )
    return TestClient(create_web_app(tiny.settings, api_key=""))


def test_a_policy_has_one_clone_label_in_both_tables(two_scopes):
    rolling = two_scopes.get("/web/api/compare/rolling").json()
    assert "ppo = a2c" in [row["policy"] for row in rolling["table"]]
    assert "a2c" in [row["policy"] for row in rolling["table"]]
    assert rolling["clones"] == ["ppo: identical to a2c on every window"]
    episode = two_scopes.get("/web/api/compare/episode", params={"key": KEY}).json()
    labels = {m["policy"]: (m["label"], m["clone_of"]) for m in episode["metrics"]}
    assert labels["ppo"] == ("ppo = a2c", "a2c")  # not "ppo = buy_and_hold"
    assert labels["a2c"] == ("a2c = buy_and_hold", "buy_and_hold")  # true on this episode
    assert episode["clones"] == [
        "a2c: identical to buy_and_hold on every day of this episode",
        "ppo: identical to a2c on every day of this episode",
    ]
