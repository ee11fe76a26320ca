"""Counted looks at the test split: recording, model versions, counting per run."""

import json
from datetime import date

import pandas as pd
import pytest

from stocker_core.evaluation.looks import (
    config_hash,
    look_counts,
    look_settings,
    looks_of,
    model_versions,
    record_test_look,
    touches_test,
)
from stocker_core.evaluation.store import read_eval
from stocker_core.warehouse.db import Warehouse


def test_config_hash_is_stable_and_order_free():
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2}) and len(config_hash({})) == 16


def test_model_versions_of_rules_council_and_trained_models(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    versions = model_versions(warehouse, ["macd", "council", "ppo"], ["rule:v1:abc", None, "rule:v1:abc"])
    assert versions == {"macd": "rules", "council": "rule:v1:abc", "ppo": "rules"}


def test_moderator_and_agent_versions_come_from_their_latest_training_run(tmp_path):
    """Their assets are not partitioned by policy: a look names their weights by the latest
    ``models.runs`` row (sha256 prefix); agent_base is the warm start of the agent's run."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.ensure_schema()
    with warehouse.transaction() as con:
        for i, (name, sha) in enumerate(
            [("moderator_grpo", "a" * 64), ("moderator_grpo", "b" * 64), ("agent_rl", "c" * 64)]
        ):
            con.execute(
                "INSERT INTO models.runs (run_id, model_name, kind, sha256, created_at) "
                "VALUES (?, ?, 'lora', ?, ?)",
                [f"r{i}", name, sha, pd.Timestamp("2026-01-01") + pd.Timedelta(days=i)],
            )
    versions = model_versions(warehouse, ["moderator_grpo", "agent_rl", "agent_base", "agent_scripted"])
    assert versions == {
        "moderator_grpo": "b" * 16,
        "agent_rl": "c" * 16,
        "agent_base": "base of " + "c" * 16,
        "agent_scripted": "rules",
    }


def test_looks_are_counted_per_model_and_settings_and_flagged(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    first = {"council": "v1", "macd": "rules"}
    same = look_settings(0, {"cost": 0.001})
    # the main job's backtests (one run per ticker) and its rolling evaluation, then the same
    # job again: the same models under the same settings show the same results, one look
    record_test_look(warehouse, "asset", "backtests", ["GOOGL"], first, same, run_id="run-1")
    record_test_look(warehouse, "asset", "backtests", ["AAPL"], first, same, run_id="run-2")
    record_test_look(warehouse, "asset", "rolling_evaluation", ["GOOGL", "AAPL"], first, same, "run-3")
    assert looks_of(warehouse, first) == 1
    record_test_look(
        warehouse, "cli", "backtest", ["GOOGL"], {"council": "v1"}, look_settings(1, {"cost": 0.001})
    )
    record_test_look(warehouse, "web", "play", ["GOOGL"], {"council": "v2"}, same)
    looks = read_eval(warehouse, "eval.test_looks")
    assert len(looks) == 5 and json.loads(looks.iloc[2]["tickers"]) == ["AAPL", "GOOGL"]
    counts = look_counts(looks).set_index(["policy", "version"])
    assert counts.loc[("council", "v1"), "looks"] == 2 and bool(counts.loc[("council", "v1"), "flag"])
    assert counts.loc[("council", "v2"), "looks"] == 1 and not counts.loc[("council", "v2"), "flag"]
    assert counts.loc[("macd", "rules"), "looks"] == 1
    assert looks_of(warehouse, {"council": "v1"}) == 2
    with pytest.raises(ValueError, match="who must be one of"):
        record_test_look(warehouse, "someone", "x", [], {}, {})


def test_touches_test():
    ranges = {"GOOGL": (date(2020, 1, 1), date(2020, 6, 30)), "AAPL": (date(2021, 1, 1), date(2021, 6, 30))}
    days = {
        "GOOGL": pd.bdate_range("2019-12-01", "2020-01-02"),
        "AAPL": pd.bdate_range("2020-01-01", "2020-02-01"),
        "MSFT": pd.bdate_range("2020-01-01", "2020-02-01"),
    }
    assert touches_test(ranges, days) == ["GOOGL"]
    assert look_counts(pd.DataFrame()).empty
