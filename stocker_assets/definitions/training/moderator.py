"""Training: the moderator's base model, SFT warm start and GRPO adapter.

Each asset calls one stage of ``stocker_core.moderator.training`` and shows what trained
it (base model, config, seed, episode partitions, vote-cache version), the wall time, the
loss / reward curve and a held-out (valid split) table; the same facts go to
``meta.lineage`` and ``models.runs``.
"""

import json

import dagster as dg

from stocker_assets.definitions.automation import WEEKLY_RETRAIN
from stocker_assets.definitions.council import specialist_votes
from stocker_assets.definitions.env import episodes, ideal_trajectories
from stocker_assets.definitions.evaluation.assets import splits
from stocker_assets.definitions.factories import warehouse_asset
from stocker_assets.definitions.lineage import png_markdown
from stocker_assets.definitions.progress import progress_message
from stocker_assets.definitions.queues import celery_queue_tags
from stocker_assets.definitions.resources import StockerResource
from stocker_core.moderator.config import TrainingConfig, load_config
from stocker_core.moderator.training import (
    CURVE_FILE,
    StageReport,
    finish_stage,
    prepared_data,
    run_base,
    run_grpo_stage,
    run_sft_stage,
)
from stocker_core.warehouse.db import Warehouse

TRAINING = "training"


class TrainingRunConfig(dg.Config):
    """Optional run config: a TrainingConfig YAML file and JSON overrides of its fields
    (otherwise defaults and ``STOCKER_MODERATOR_*`` variables)."""

    config_path: str | None = None
    overrides_json: str = "{}"


def _training_config(run: TrainingRunConfig) -> TrainingConfig:
    return load_config(run.config_path, **json.loads(run.overrides_json or "{}"))


def _metadata(report: StageReport) -> dict[str, object]:
    png = (report.path / CURVE_FILE).read_bytes()
    metadata: dict[str, object] = {
        "path": dg.MetadataValue.path(str(report.path)),
        "sha256": report.sha256,
        "base_model": report.base_model,
        "seed": report.seed,
        "config": dg.MetadataValue.json(report.config),
        "episode_partitions": dg.MetadataValue.json(report.episode_keys),
        "vote_cache_version": report.vote_cache_version,
        "votes_data_version": report.votes_data_version,
        "wall_seconds": round(report.wall_seconds, 2),
        "steps": report.steps,
        "curve": png_markdown(png, report.curve_name or "curve"),
        **{k: v for k, v in report.extra.items() if isinstance(v, int | float | str)},
    }
    if not report.heldout.empty:
        metadata["heldout_valid"] = dg.MetadataValue.md(
            report.heldout.to_markdown(index=False, floatfmt=".3f")
        )
    return metadata


def _record(context: dg.AssetExecutionContext, warehouse: Warehouse, report: StageReport) -> None:
    code_version = context.assets_def.code_versions_by_key.get(context.asset_key) or ""
    upstream = {"council.votes": report.votes_data_version, "vote_cache": report.vote_cache_version}
    upstream.update({f"episodes@{key}": "" for key in report.episode_keys})
    warehouse.record_lineage(
        [
            {
                "asset": context.asset_key.to_user_string(),
                "partition": None,
                "run_id": context.run.run_id,
                "code_version": code_version,
                "data_version": report.sha256[:16],
                "upstream": upstream,
                "row_count": report.steps,
            }
        ]
    )


def _materialize(
    context: dg.AssetExecutionContext, stocker: StockerResource, run: TrainingRunConfig, stage: str
) -> dg.MaterializeResult:
    settings, warehouse = stocker.settings(), stocker.warehouse()
    config = _training_config(run)
    data = prepared_data(config, settings, warehouse)
    context.log.info(
        f"{len(data.splits.train)} train episodes ({len(data.rows)} steps), "
        f"{len(data.valid_contexts)} held-out episodes, votes {data.votes.cache_version}"
    )

    def progress(name: str, done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:
            context.log.info(progress_message(done, total, f"{name} steps"))

    if stage == "base":
        report = run_base(config, settings)
    elif stage == "sft":
        report = run_sft_stage(config, settings, data, progress)
    else:
        report = run_grpo_stage(config, settings, data, progress)
    report = finish_stage(report, settings, data, config, context.run.run_id)
    _record(context, warehouse, report)
    return dg.MaterializeResult(metadata=_metadata(report), data_version=dg.DataVersion(report.sha256[:16]))


def _stage_asset(name: str, stage: str, deps: list, description: str) -> dg.AssetsDefinition:
    """The asset ``name`` that runs the moderator's ``stage`` (``base``, ``sft`` or ``grpo``)."""

    @warehouse_asset(
        TRAINING,
        description,
        name=name,
        op_tags=celery_queue_tags("gpu"),
        deps=deps,
        automation_condition=WEEKLY_RETRAIN,
        kinds={"pytorch", "duckdb"},
    )
    def _asset(
        context: dg.AssetExecutionContext, stocker: StockerResource, config: TrainingRunConfig
    ) -> dg.MaterializeResult:
        return _materialize(context, stocker, config, stage)

    return _asset


moderator_base = _stage_asset(
    "moderator_base",
    "base",
    [episodes, specialist_votes, splits],
    "The moderator's base model and tokenizer ($STOCKER_HOME/models/moderator_base): the offline "
    "tiny Llama built here, smollm2, or any HF id (STOCKER_MODERATOR_MODEL).",
)
moderator_sft = _stage_asset(
    "moderator_sft",
    "sft",
    [moderator_base, specialist_votes, ideal_trajectories],
    "LoRA adapter after the SFT warm start: the nine answers fitted to their rewards on the "
    "train-split states, the checkpoint chosen on valid ($STOCKER_HOME/models/moderator_sft).",
)
moderator_grpo = _stage_asset(
    "moderator_grpo",
    "grpo",
    [moderator_sft],
    "LoRA adapter after the RL stage: every answer's excess reward over buy-and-hold, the "
    "soft-target objective by default, the checkpoint chosen on valid "
    "($STOCKER_HOME/models/moderator_grpo).",
)
