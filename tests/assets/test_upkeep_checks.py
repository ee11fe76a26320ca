"""The upkeep checks through Dagster: freshness on the seed fixture with a planted gap, the
model checks on training reports written by the report contract, the backtest invariants on
real backtests and the test-look count on the report."""

import json
import shutil
import sys
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from stocker_assets.definitions.evaluation.assets import backtests, evaluation_report, splits
from stocker_assets.definitions.evaluation.checks import (
    equity_starts_at_starting_cash,
    ideal_is_an_upper_bound,
    report_counts_test_looks,
)
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.market.checks import prices_are_fresh, prices_are_valid
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_assets.definitions.training.agent import agent_policy
from stocker_assets.definitions.training.checks import (
    agent_policy_checks,
    moderator_grpo_checks,
    moderator_sft_checks,
)
from stocker_assets.definitions.training.moderator import moderator_grpo, moderator_sft
from stocker_core.evaluation.looks import record_test_look
from stocker_core.warehouse import Warehouse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluation"))
from evaluation_testing import RULE_POLICIES, store_prices, synthetic_prices  # noqa: E402


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        inst.add_dynamic_partitions(ticker_partitions.name, ["AAPL", "SYN"])
        yield inst


def _gapped_fixture(seed_dir: Path, target: Path, dropped: list[str]) -> Path:
    """A copy of the seed fixture without AAPL's bars on ``dropped`` dates."""
    shutil.copytree(seed_dir, target)
    bars = pd.read_csv(target / "prices.csv", dtype=str)
    keep = ~((bars["ticker"] == "AAPL") & bars["date"].isin(dropped))
    assert (~keep).sum() == len(dropped)
    bars[keep].to_csv(target / "prices.csv", index=False)
    return target


def _evaluations(result) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


@pytest.mark.parametrize(
    ("dropped", "passed", "severity"),
    [
        ([], True, None),
        (["2023-08-14", "2023-08-15"], False, dg.AssetCheckSeverity.WARN),
        (
            ["2023-08-25", "2023-08-28", "2023-08-29", "2023-08-30", "2023-08-31"],
            False,
            dg.AssetCheckSeverity.ERROR,
        ),
    ],
)
def test_freshness_on_the_fixture_with_a_planted_gap(instance, tmp_path, seed_dir, dropped, passed, severity):
    files = _gapped_fixture(seed_dir, tmp_path / "fixture", dropped)
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(files))
    result = dg.materialize(
        [prices, prices_are_valid, prices_are_fresh],
        instance=instance,
        resources={"stocker": resource},
        partition_key="AAPL|2023-08-01",
    )
    assert result.success  # not blocking: downstream still runs
    check = _evaluations(result)["prices_are_fresh"]
    assert check.passed is passed
    if severity is not None:
        assert check.severity == severity
    meta = check.metadata
    assert meta["max_missing_sessions"].value == len(dropped)
    assert meta["tickers_stale"].value == (0 if passed else 1)
    assert "AAPL" in meta["per_ticker"].value
    if dropped:
        assert meta["missing"].value == {"AAPL": dropped}


def _heldout(policy: str, returns: list[float], unparsable: int = 0) -> list[dict]:
    return [
        {
            "policy": policy,
            "episode_key": f"GOOGL|2017-{i + 1:02d}-01",
            "final_value": 10_000 * (1 + r),
            "total_return": r,
            "unparsable": unparsable,
            "steps": 40,
        }
        for i, r in enumerate(returns)
    ]


def _write_report(home: Path, stage: str, report: dict) -> None:
    folder = home / "models" / f"moderator_{stage}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "training.json").write_text(json.dumps({"stage": stage, "path": str(folder), **report}))


def _run_model_checks(instance, home: Path, assets, checks):
    return dg.materialize(
        [*assets, *checks],
        instance=instance,
        resources={"stocker": StockerResource(home=str(home))},
        selection=dg.AssetSelection.checks_for_assets(*assets),
    )


def test_model_equal_to_buy_and_hold_shows_warnings(instance, tmp_path):
    home = tmp_path / "home"
    returns = [0.03, -0.02, 0.01, 0.04, -0.01, 0.02]
    _write_report(
        home,
        "grpo",
        {
            "heldout_episodes": _heldout("moderator_grpo", returns) + _heldout("buy_and_hold", returns),
            "extra": {"frac_reward_zero_std": [0.2] * 18 + [1.0, 1.0]},
        },
    )
    result = _run_model_checks(instance, home, [moderator_grpo], [moderator_grpo_checks])
    assert result.success
    checks = _evaluations(result)
    parse = checks["valid_parse_rate"]
    assert parse.passed and parse.metadata["parse_rate"].value == 1.0
    delta = checks["valid_return_vs_buy_and_hold"]
    assert not delta.passed and delta.severity == dg.AssetCheckSeverity.WARN
    assert delta.metadata["delta_total_return_mean"].value == 0.0
    assert (delta.metadata["ci_low"].value, delta.metadata["ci_high"].value) == (0.0, 0.0)
    assert delta.metadata["paired_episodes"].value == 6
    assert "not above zero" in delta.metadata["verdict"].value
    spread = checks["reward_groups_have_spread"]
    assert not spread.passed and spread.severity == dg.AssetCheckSeverity.WARN
    assert spread.metadata["zero_spread_share_last_tenth"].value == 1.0


def test_low_parse_rate_is_an_error_and_an_older_report_warns(instance, tmp_path):
    home = tmp_path / "home"
    _write_report(
        home,
        "sft",
        {
            "heldout_episodes": _heldout("moderator_sft", [0.05, 0.06], unparsable=4)
            + _heldout("buy_and_hold", [0.0, 0.01]),
            "extra": {"rows": 10},  # SFT has no reward groups: no frac_reward_zero_std
        },
    )
    _write_report(home, "grpo", {"heldout": [], "extra": {"rows": 10}})  # before the contract
    result = _run_model_checks(
        instance, home, [moderator_sft, moderator_grpo], [moderator_sft_checks, moderator_grpo_checks]
    )
    assert result.success
    by_asset = {(e.asset_key.to_user_string(), e.check_name): e for e in result.get_asset_check_evaluations()}
    parse = by_asset[("moderator_sft", "valid_parse_rate")]
    assert not parse.passed and parse.severity == dg.AssetCheckSeverity.ERROR
    assert parse.metadata["parse_rate"].value == pytest.approx(0.9)  # 8 of 80 decisions unparsable
    spread = by_asset[("moderator_sft", "reward_groups_have_spread")]
    assert spread.passed and spread.metadata["note"].value == "supervised stage: no reward groups"
    for name in ("valid_parse_rate", "valid_return_vs_buy_and_hold", "reward_groups_have_spread"):
        old = by_asset[("moderator_grpo", name)]
        assert not old.passed and old.severity == dg.AssetCheckSeverity.WARN
        assert old.metadata["figures"].value == "missing"


def test_agent_checks_read_the_current_manifest(instance, tmp_path):
    home = tmp_path / "home"
    result = _run_model_checks(instance, home, [agent_policy], [agent_policy_checks])
    assert result.success  # not trained: warnings that say so
    assert all(
        "no readable training report" in e.metadata["why"].value for e in _evaluations(result).values()
    )
    run_dir = home / "models" / "agent_rl" / "run1"
    (run_dir / "adapter").mkdir(parents=True)
    (run_dir / "base").mkdir()
    (run_dir / "adapter" / "adapter_config.json").write_text("{}")
    manifest = {
        "run_dir": str(run_dir),
        "heldout_episodes": _heldout("agent_rl", [0.02, 0.03, 0.02]) + _heldout("buy_and_hold", [0.0] * 3),
        "rl_log": [{"step": i, "informative_groups": 0.75} for i in range(10)],
    }
    (home / "models" / "agent_rl" / "current.json").write_text(json.dumps(manifest))
    checks = _evaluations(_run_model_checks(instance, home, [agent_policy], [agent_policy_checks]))
    assert checks["valid_return_vs_buy_and_hold"].passed
    assert checks["valid_return_vs_buy_and_hold"].metadata["ci_low"].value > 0
    spread = checks["reward_groups_have_spread"]
    assert spread.passed and spread.metadata["zero_spread_share_last_tenth"].value == pytest.approx(0.25)
    # the manifest's own per-step series (as train_agent writes it) wins over the RL log
    manifest["frac_reward_zero_std"] = [0.0] * 9 + [0.9]
    (home / "models" / "agent_rl" / "current.json").write_text(json.dumps(manifest))
    checks = _evaluations(_run_model_checks(instance, home, [agent_policy], [agent_policy_checks]))
    spread = checks["reward_groups_have_spread"]
    assert not spread.passed and spread.metadata["zero_spread_share_last_tenth"].value == pytest.approx(0.9)


@pytest.mark.slow
def test_backtest_invariants_and_test_looks_on_real_backtests(instance, tmp_path):
    resource = StockerResource(home=str(tmp_path / "home"))
    warehouse = Warehouse(resource.settings().warehouse_path)
    warehouse.ensure_schema()
    store_prices(warehouse, synthetic_prices(days=400))
    resources = {"stocker": resource}
    config = {"policies": RULE_POLICIES, "window_days": 20, "step_days": 5, "resamples": 200}
    assert dg.materialize([splits], instance=instance, resources=resources).success
    result = dg.materialize(
        [backtests, ideal_is_an_upper_bound, equity_starts_at_starting_cash],
        instance=instance,
        resources=resources,
        partition_key="SYN|2015-03-01",
        run_config={"ops": {"backtests": {"config": config}}},
    )
    assert result.success
    checks = _evaluations(result)
    for name in ("ideal_is_an_upper_bound", "equity_starts_at_starting_cash"):
        assert checks[name].passed, checks[name].metadata["problems"].value
        assert checks[name].metadata["policy_rows"].value == len(RULE_POLICIES)

    def report_check():
        run = dg.materialize(
            [evaluation_report, report_counts_test_looks],
            instance=instance,
            resources=resources,
            selection=dg.AssetSelection.checks_for_assets(evaluation_report),
        )
        return _evaluations(run)["report_counts_test_looks"]

    first = report_check()  # backtests of a train-split month are no test look
    assert first.passed and first.metadata["max_looks"].value == 0
    for seed in (1, 2):  # the same model version played under two settings: two looks
        record_test_look(
            warehouse, "cli", "backtest", ["SYN"], {"moderator_grpo": "a", "agent_rl": "b"}, {"seed": seed}
        )
    record_test_look(warehouse, "cli", "backtest", ["SYN"], {"agent_rl": "b"}, {"seed": 1})
    second = report_check()
    assert not second.passed and second.severity == dg.AssetCheckSeverity.WARN
    assert second.metadata["max_looks"].value == 2
    assert second.metadata["models_looked_at_more_than_once"].value == 2
