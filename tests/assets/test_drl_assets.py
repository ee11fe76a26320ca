"""drl_agents through Dagster on a tiny synthetic warehouse (prices, splits, episodes)."""

import json
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest
from stocker_testing import make_bars

from stocker_assets.definitions.evaluation.drl import DrlAgentsConfig, drl_agents
from stocker_assets.definitions.resources import StockerResource
from stocker_core.baselines.drl.store import current_result
from stocker_core.baselines.drl.training import file_sha256
from stocker_core.env.catalog import episode_row, solve_episode
from stocker_core.env.episode import episode_from_bars
from stocker_core.evaluation.splits import SplitError
from stocker_core.evaluation.steps import compute_and_store_splits
from stocker_core.warehouse import Warehouse

TINY = DrlAgentsConfig(timesteps=128, ppo_n_steps=64, ppo_batch_size=32)


def _store_prices_and_episodes(resource: StockerResource, with_splits: bool = True) -> list[str]:
    """700 business days of SYN from 2019-01-01; episodes starting each month of 2019-2020."""
    settings = resource.settings()
    warehouse = Warehouse(settings.warehouse_path)
    closes = 100 * np.exp(np.cumsum(np.random.default_rng(5).normal(0.0003, 0.015, 700)))
    bars = make_bars(closes, start="2019-01-01")
    warehouse.replace_partitions("market.prices", "SYN", bars)
    if with_splits:
        compute_and_store_splits(warehouse)
    keys = [f"SYN|{m.date().isoformat()}" for m in pd.date_range("2019-01-01", "2020-12-01", freq="MS")]
    episodes = [episode_from_bars(key, bars, settings, "warehouse") for key in keys]
    frame = pd.DataFrame([episode_row(solve_episode(ep, settings.transaction_cost)) for ep in episodes])
    warehouse.replace_months(
        "env.episodes", "SYN", list(frame["month"]), frame.drop(columns="ticker"), month_column="month"
    )
    return keys


@pytest.mark.slow
def test_drl_agents_train_on_train_split_episodes_and_record_runs_and_lineage(tmp_path):
    resource = StockerResource(home=str(tmp_path / "home"))
    keys = _store_prices_and_episodes(resource)
    result = dg.materialize(
        [drl_agents],
        resources={"stocker": resource},
        run_config=dg.RunConfig({"drl_agents": TINY}),
    )
    assert result.success
    warehouse = Warehouse(resource.settings().warehouse_path)
    train = warehouse.query("SELECT end_date FROM eval.splits WHERE split = 'train'")["end_date"].iloc[0]
    runs = warehouse.query("SELECT * FROM models.runs ORDER BY model_name")
    assert list(runs["model_name"]) == ["a2c", "ppo"] and set(runs["kind"]) == {"drl"}
    assert all(
        run_id.endswith(f":{algo}") for run_id, algo in zip(runs["run_id"], runs["model_name"], strict=True)
    )
    trained_on = json.loads(runs["episode_keys"].iloc[0])
    # (700 - 2 * 30) * 0.6 = 384 train days end on 2020-06-19: the last whole 2-month window is Apr-May
    assert trained_on == keys[: keys.index("SYN|2020-04-01") + 1] and len(trained_on) == 16
    ends = warehouse.query(
        "SELECT max(end_date) AS last FROM env.episodes WHERE key IN (SELECT unnest(?))", [trained_on]
    )["last"].iloc[0]
    assert pd.Timestamp(ends) <= pd.Timestamp(train)
    for row in runs.itertuples():
        assert not Path(row.path).is_absolute()  # relative to the home, which can move
        assert file_sha256(resource.settings().home / row.path) == row.sha256
        assert current_result(resource.settings().home, row.model_name).sha256 == row.sha256
        assert json.loads(row.config)["timesteps"] == 128 and row.seed == 0
        assert json.loads(row.metrics)["timesteps"] >= 128
    lineage = warehouse.query("SELECT * FROM meta.lineage WHERE asset = 'drl_agents' ORDER BY partition")
    assert list(lineage["partition"]) == ["a2c", "ppo"]
    upstream = json.loads(lineage["upstream_data_versions"].iloc[0])
    assert sorted(upstream) == sorted(f"episodes@{k}" for k in trained_on)
    meta = result.asset_materializations_for_node("drl_agents")[0].metadata
    assert meta["episodes"].value == 16 and meta["a2c_timesteps"].value >= 128
    assert meta["reward_curve"].value.startswith("![training reward](data:image/png;base64,")
    assert "| algo" in meta["models"].value


def test_drl_agents_without_splits_says_what_to_materialize(tmp_path):
    resource = StockerResource(home=str(tmp_path / "home"))
    _store_prices_and_episodes(resource, with_splits=False)
    with pytest.raises(SplitError, match="materialize the `splits` asset"):
        dg.materialize(
            [drl_agents], resources={"stocker": resource}, run_config=dg.RunConfig({"drl_agents": TINY})
        )
