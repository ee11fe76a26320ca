"""The compare view names clones: a policy whose numbers equal another's on every window (or, for
one episode, on every day) reads "ppo = hold" and is listed under the table."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from web_testing import KEY, build_tiny_home

from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.steps import compute_and_store_splits, rolling_evaluation
from stocker_core.web.app import create_web_app


@pytest.fixture(scope="module")
def cloned(tmp_path_factory) -> TestClient:
    """The tiny home with a rolling evaluation, and ``ppo`` stored as a copy of ``hold``."""
    tiny = build_tiny_home(tmp_path_factory.mktemp("clones") / "home")
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
