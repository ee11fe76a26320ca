"""The training group through Dagster at tiny sizes: models, metadata, lineage, models.runs."""

import json

import dagster as dg
from training_testing import TRAIN, VALID

from stocker_assets.definitions.resources import StockerResource
from stocker_assets.definitions.training.moderator import moderator_base, moderator_grpo, moderator_sft
from stocker_core.warehouse import Warehouse

OVERRIDES = json.dumps(
    {
        "train_episodes": TRAIN,
        "valid_episodes": VALID,
        "sft_epochs": 4.0,
        "grpo_steps": 2,
        "grpo_prompts": 16,
        "logging_steps": 1,
    }
)


def test_training_group_materializes_with_metadata_and_lineage(tmp_path, seed_dir):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(seed_dir))
    run_config = {
        "ops": {
            name: {"config": {"overrides_json": OVERRIDES}}
            for name in ("moderator_base", "moderator_sft", "moderator_grpo")
        }
    }
    result = dg.materialize(
        [moderator_base, moderator_sft, moderator_grpo],
        resources={"stocker": resource},
        run_config=run_config,
    )
    assert result.success
    meta = result.asset_materializations_for_node("moderator_grpo")[0].metadata
    assert meta["base_model"].value == "tiny" and meta["seed"].value == 0 and meta["steps"].value == 2
    assert meta["episode_partitions"].value == TRAIN
    assert meta["vote_cache_version"].value.startswith("rule:")
    assert "moderator_grpo" in meta["heldout_valid"].value and "rule_council" in meta["heldout_valid"].value
    assert meta["curve"].value.startswith("![reward](data:image/png;base64,")
    home = tmp_path / "home" / "models"
    assert {p.name for p in home.iterdir()} == {"moderator_base", "moderator_sft", "moderator_grpo"}
    warehouse = Warehouse(resource.settings().warehouse_path)
    lineage = warehouse.query("SELECT asset, run_id, data_version, upstream_data_versions FROM meta.lineage")
    assert sorted(lineage["asset"]) == ["moderator_base", "moderator_grpo", "moderator_sft"]
    assert set(lineage["run_id"]) == {result.run_id}
    grpo_row = lineage.loc[lineage["asset"] == "moderator_grpo"].iloc[0]
    assert grpo_row["data_version"] == meta["sha256"].value[:16]
    assert "episodes@META|2022-09-01" in json.loads(grpo_row["upstream_data_versions"])
    runs = warehouse.query("SELECT run_id, kind FROM models.runs ORDER BY created_at")
    assert list(runs["kind"]) == ["base", "sft", "grpo"]
    assert all(r.startswith(result.run_id) for r in runs["run_id"])
