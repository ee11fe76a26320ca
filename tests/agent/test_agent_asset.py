"""agent_policy materializes on the sample data: adapter, models.runs row, lineage, curves."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from stocker_assets.definitions.resources import StockerResource
from stocker_assets.definitions.training.agent import AgentPolicyConfig, agent_policy


@pytest.mark.slow
def test_agent_policy_trains_and_records_run_and_lineage(tmp_path):
    resource = StockerResource(home=str(tmp_path / "home"), source="sample")
    overrides = {
        # one ticker: the wiring is the same, and the held-out play of every valid window of
        # the sample's 11 tickers (~2,200 tool-loop decisions) took 9/10 of this test's time
        "tickers": ["GOOGL"],
        "tiny_hidden_size": 32,
        "tiny_intermediate_size": 64,
        "tiny_layers": 1,
        "tiny_heads": 2,
        "sft_batch_size": 8,
        "rl_prompts_per_step": 2,
        "num_generations": 2,
        "max_train_pairs": 12,
        "max_valid_pairs": 4,
        "max_new_tokens": 24,
        "decision_fit_steps": 4,
        "decision_fit_eval_every": 2,
    }
    run_config = AgentPolicyConfig(rl_steps=1, sft_steps=10, overrides_json=json.dumps(overrides))
    result = dg.materialize(
        [agent_policy],
        resources={"stocker": resource},
        run_config=dg.RunConfig({"agent_policy": run_config}),
    )
    assert result.success
    metadata = result.asset_materializations_for_node("agent_policy")[0].metadata
    assert metadata["base_model"].value == "tiny" and metadata["tickers"].value == "GOOGL"
    assert metadata["train_pairs"].value == 12 and metadata["splits"].value == "computed"
    assert "data:image/png;base64," in metadata["validation_curves"].value
    warehouse = resource.warehouse()
    runs = warehouse.query("SELECT model_name, kind, sha256, path FROM models.runs")
    assert list(runs["kind"]) == ["agent_rl"] and runs["sha256"].iloc[0] == metadata["sha256"].value
    lineage = warehouse.query("SELECT asset, data_version, upstream_data_versions FROM meta.lineage")
    assert list(lineage["asset"]) == ["agent_policy"]
    assert "prices@GOOGL" in json.loads(lineage["upstream_data_versions"].iloc[0])
