"""``stocker backtest | splits | report`` through an app of the evaluation area alone."""

import json
from datetime import timedelta

import pytest
import typer
from evaluation_testing import RULE_POLICIES, store_prices, synthetic_prices
from typer.testing import CliRunner

from stocker_core.cli import build_app
from stocker_core.config import get_settings
from stocker_core.evaluation import commands as evaluation_cli
from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.steps import backtest_partitions, compute_and_store_splits, rolling_evaluation
from stocker_core.warehouse.db import Warehouse

runner = CliRunner()


@pytest.fixture
def app() -> typer.Typer:
    return build_app([evaluation_cli.commands])


def test_backtest_json_has_one_row_per_policy_with_every_metric(app, files_env):
    result = runner.invoke(
        app, ["backtest", "--task", "task_easy", "--json", "--policies", ",".join(RULE_POLICIES)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["episode"]["trading_days"] == 43
    rows = {r["policy"]: r for r in data["rows"]}
    assert list(rows) == RULE_POLICIES
    for column in (
        "total_reward",
        "final_value",
        "total_return",
        "arr",
        "sharpe",
        "sharpe_annual",
        "sortino",
        "volatility",
        "mdd",
        "calmar",
        "win_rate",
        "trades",
        "turnover",
        "exposure",
    ):
        assert column in rows["buy_and_hold"]
    assert rows["ideal"]["label"] == "ideal (hindsight upper bound)"
    assert rows["hold"]["final_value"] == 10_000 and rows["hold"]["sharpe"] is None
    assert rows["ideal"]["final_value"] >= rows["buy_and_hold"]["final_value"]


def test_backtest_table_and_errors(app, files_env):
    table = runner.invoke(app, ["backtest", "--task", "task_easy", "--policies", "macd,ideal"])
    assert table.exit_code == 0 and "ideal (hindsight upper bound)" in table.stdout
    unknown = runner.invoke(app, ["backtest", "--task", "task_easy", "--policies", "macd,nope"])
    assert unknown.exit_code == 2 and "unknown policy 'nope'" in unknown.output and "zmr" in unknown.output
    both = runner.invoke(app, ["backtest", "--task", "task_easy", "--episode", "AAPL|2023-08-01"])
    assert both.exit_code == 2


def test_a_named_policy_that_fails_is_a_failed_run(app, files_env, monkeypatch):
    from stocker_core.env.policies import POLICIES

    class Broken:
        def act(self, observation):
            raise RuntimeError("no model file")

    monkeypatch.setitem(POLICIES, "broken", lambda env, seed, settings: Broken())
    result = runner.invoke(app, ["backtest", "--task", "task_easy", "--policies", "hold,broken"])
    assert result.exit_code == 1 and "broken failed: RuntimeError: no model file" in result.output


def test_splits_and_report(app, tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    settings = get_settings(fresh=True)
    missing = runner.invoke(app, ["splits", "--json"])
    assert missing.exit_code == 2 and "stocker materialize" in missing.output
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices(days=400))
    computed = json.loads(runner.invoke(app, ["splits", "--json"]).stdout)
    assert computed["stored"] is False and [s["split"] for s in computed["splits"]] == [
        "train",
        "valid",
        "test",
    ]
    no_rows = runner.invoke(app, ["report"])
    assert no_rows.exit_code == 2 and "materialize the evaluation group" in no_rows.output
    compute_and_store_splits(warehouse)
    assert json.loads(runner.invoke(app, ["splits", "--json"]).stdout)["stored"] is True
    backtest_partitions(settings, warehouse, ["SYN|2015-03-01"], RULE_POLICIES)
    rolling_evaluation(
        settings, warehouse, RULE_POLICIES, RollingConfig(window_days=20, step_days=5, resamples=100)
    )
    report = runner.invoke(app, ["report", "--name", "cli"])
    assert report.exit_code == 0
    assert report.stdout.strip() == str(settings.home / "reports" / "cli" / "report.html")
    get_settings(fresh=True)


def test_backtest_on_a_test_split_episode_is_a_counted_look(app, tmp_path, monkeypatch):
    from stocker_core.evaluation.store import read_eval

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    settings = get_settings(fresh=True)
    try:
        warehouse = Warehouse(settings.warehouse_path)
        store_prices(warehouse, synthetic_prices(days=400))
        splits = compute_and_store_splits(warehouse)
        test, train = splits.range_of("SYN", "test"), splits.range_of("SYN", "train")
        in_test = f"SYN|{test.start.replace(day=1) + timedelta(days=32):%Y-%m}-01"  # a month wholly inside
        in_train = f"SYN|{train.start:%Y-%m}-01"
        quiet = runner.invoke(app, ["backtest", "--episode", in_train, "--policies", "macd", "--json"])
        assert quiet.exit_code == 0, quiet.output
        assert json.loads(quiet.stdout)["test_looks"] is None and "test look" not in quiet.output
        first = runner.invoke(app, ["backtest", "--episode", in_test, "--policies", "macd,hold", "--json"])
        assert first.exit_code == 0, first.output
        assert json.loads(first.stdout)["test_looks"] == 1
        assert "this is a test look" in first.stderr and "now had 1" in first.stderr
        # the same evaluation again shows nothing new: recorded, still one look
        again = runner.invoke(app, ["backtest", "--episode", in_test, "--policies", "macd"])
        assert "this is a test look" in again.stderr and "now had 1" in again.stderr
        other = runner.invoke(app, ["backtest", "--episode", in_test, "--policies", "macd", "--seed", "1"])
        assert "now had 2" in other.stderr  # other settings: a second look
        looks = read_eval(warehouse, "eval.test_looks")
        assert len(looks) == 3 and set(looks["who"]) == {"cli"} and set(looks["what"]) == {"backtest"}
    finally:
        get_settings(fresh=True)
