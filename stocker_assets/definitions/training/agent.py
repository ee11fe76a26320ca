"""Training: the tool-using agent trained with RL with tool calls (``agent_policy``).

A thin wrapper over ``stocker_core.agent.training.train_agent``: the warm start on
scripted traces, RL on the train split, the adapter under
``$STOCKER_HOME/models/agent_rl/<run>/``; metadata shows what trained it, the wall time,
the held-out (valid split) result / format / tool curves as a plot, and the same facts go
to ``models.runs`` and ``meta.lineage``.
"""

import json
from typing import TYPE_CHECKING

import dagster as dg
import pandas as pd

from stocker_assets.definitions.automation import AGENT_WEEKLY_RETRAIN
from stocker_assets.definitions.factories import warehouse_asset
from stocker_assets.definitions.lineage import png_markdown
from stocker_assets.definitions.progress import throttled_progress
from stocker_assets.definitions.queues import celery_queue_tags
from stocker_assets.definitions.resources import StockerResource

if TYPE_CHECKING:
    from stocker_core.agent.config import AgentConfig

TRAINING = "training"


class AgentPolicyConfig(dg.Config):
    """Run config of the agent's training (unset fields: ``STOCKER_AGENT_*``, then defaults)."""

    model: str | None = None
    rl_steps: int | None = None
    sft_steps: int | None = None
    seed: int | None = None
    theta: float | None = None
    horizon: int | None = None
    max_tool_calls: int | None = None
    overrides_json: str = "{}"
    """Any other AgentConfig field as JSON, e.g. {"rl_learning_rate": 0.002}."""

    def agent_config(self) -> "AgentConfig":
        from stocker_core.agent.config import agent_config

        fields = ("model", "rl_steps", "sft_steps", "seed", "theta", "horizon", "max_tool_calls")
        return agent_config(
            **json.loads(self.overrides_json or "{}"), **{f: getattr(self, f) for f in fields}
        )


@warehouse_asset(
    TRAINING,
    "The tool-using agent: the tiny offline model (or smollm2 / a Hub id) warm-started on scripted "
    "traces, then RL with tool calls on the train split; LoRA adapter under "
    "$STOCKER_HOME/models/agent_rl/<run>/ with held-out result / format / tool curves.",
    op_tags=celery_queue_tags("gpu"),
    deps=[dg.AssetKey("prices"), dg.AssetKey("splits"), dg.AssetKey("news"), dg.AssetKey("forum_posts")],
    automation_condition=AGENT_WEEKLY_RETRAIN,
    kinds={"pytorch", "duckdb"},
)
def agent_policy(
    context: dg.AssetExecutionContext, config: AgentPolicyConfig, stocker: StockerResource
) -> dg.MaterializeResult:
    from stocker_core.agent.store import model_run_row
    from stocker_core.agent.training import train_agent, training_data
    from stocker_core.baselines.drl.store import record_model_runs
    from stocker_core.warehouse.db import frame_version

    settings, warehouse = stocker.settings(), stocker.warehouse()
    agent_config = config.agent_config()
    data = training_data(settings, warehouse, agent_config)
    result = train_agent(
        agent_config,
        settings,
        warehouse,
        data=data,
        progress=context.log.info,
        steps=throttled_progress(context, "RL steps"),
    )

    record_model_runs(warehouse, [model_run_row(result, f"{context.run.run_id}:agent_rl")])
    upstream = {f"prices@{t}": frame_version(d.bars[["date", "close"]]) for t, d in data.items()}
    upstream["splits"] = result.splits_origin
    warehouse.record_lineage(
        [
            {
                "asset": context.asset_key.to_user_string(),
                "partition": None,
                "run_id": context.run.run_id,
                "code_version": context.assets_def.code_versions_by_key.get(context.asset_key) or "",
                "data_version": result.sha256[:16],
                "upstream": upstream,
                "row_count": result.train_pairs,
            }
        ]
    )
    png = result.curves_path.read_bytes()
    final = result.curves[-1]
    curves = pd.DataFrame(result.curves)[
        ["step", "result", "format", "tool", "total", "share_buy", "share_sell", "share_hold"]
    ]
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(result.run_dir),
            "sha256": result.sha256,
            "base_model": result.base_model,
            "seed": int(result.config["seed"]),
            "config": dg.MetadataValue.json(result.config),
            "tickers": ", ".join(result.tickers),
            "train_pairs": result.train_pairs,
            "train_span": " … ".join(result.train_span),
            "valid_pairs": result.valid_pairs,
            "valid_span": " … ".join(result.valid_span),
            "splits": result.splits_origin,
            "wall_seconds": round(result.wall_seconds, 2),
            "warm_start_seconds": round(result.warm_start_seconds, 2),
            "rl_seconds": round(result.rl_seconds, 2),
            "valid_result_score": round(final["result"], 4),
            "valid_format_score": round(final["format"], 4),
            "valid_tool_score": round(final["tool"], 4),
            "validation_curves": png_markdown(png, "validation curves"),
            "heldout_valid": dg.MetadataValue.md(curves.to_markdown(index=False, floatfmt=".3f")),
        },
        data_version=dg.DataVersion(result.sha256[:16]),
    )
