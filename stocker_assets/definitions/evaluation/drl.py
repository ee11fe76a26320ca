"""Evaluation: the deep-RL baselines (A2C, PPO) trained on the train split's episodes."""

import hashlib

import dagster as dg
import pandas as pd

from stocker_assets.definitions.automation import WEEKLY_RETRAIN
from stocker_assets.definitions.env import episodes
from stocker_assets.definitions.factories import warehouse_asset
from stocker_assets.definitions.lineage import png_markdown, record_build
from stocker_assets.definitions.progress import throttled_progress
from stocker_assets.definitions.resources import StockerResource
from stocker_core.baselines.drl.store import ALGOS
from stocker_core.baselines.drl.training import DrlConfig

EVALUATION = "evaluation"
_DEFAULTS = DrlConfig()


class DrlAgentsConfig(dg.Config):
    """Training budget of the deep-RL baselines (defaults: ``DrlConfig``)."""

    algos: list[str] = list(ALGOS)
    timesteps: int = _DEFAULTS.timesteps
    seed: int = _DEFAULTS.seed
    window: int = _DEFAULTS.window
    ppo_n_steps: int = _DEFAULTS.ppo_n_steps
    ppo_batch_size: int = _DEFAULTS.ppo_batch_size

    def drl_config(self) -> DrlConfig:
        return DrlConfig(
            algos=tuple(self.algos),
            timesteps=self.timesteps,
            seed=self.seed,
            window=self.window,
            ppo_n_steps=self.ppo_n_steps,
            ppo_batch_size=self.ppo_batch_size,
        )


@warehouse_asset(
    EVALUATION,
    "A2C and PPO agents (stable-baselines3) trained on the train split's episodes; model files "
    "under $STOCKER_HOME/models/drl/<algo>/, one models.runs row and one lineage row per model.",
    deps=[episodes, dg.AssetKey("splits")],
    automation_condition=WEEKLY_RETRAIN,
    kinds={"pytorch", "duckdb"},
)
def drl_agents(
    context: dg.AssetExecutionContext, config: DrlAgentsConfig, stocker: StockerResource
) -> dg.MaterializeResult:
    from stocker_core.baselines.drl.plots import reward_curves_png
    from stocker_core.baselines.drl.training import train_from_warehouse
    from stocker_core.market.builds import MonthBuild

    settings, warehouse = stocker.settings(), stocker.warehouse()
    context.log.info(f"training {', '.join(config.algos)} on the train split's stored episodes")
    training, results = train_from_warehouse(
        settings, config.drl_config(), context.run.run_id, throttled_progress(context, "timesteps")
    )

    keys = [ep.key for ep in training]
    known = warehouse.latest_data_versions("episodes", keys)
    upstream = {f"episodes@{key}": known.get(key, "unrecorded") for key in keys}
    build = MonthBuild()
    for result in results:
        build.rows[result.algo] = 1
        build.data_versions[result.algo] = result.sha256[:16]
    record_build(context, warehouse, build, {r.algo: upstream for r in results})

    png = reward_curves_png(results, f"training reward on {len(training)} train-split episodes")
    table = pd.DataFrame(
        [
            {
                "algo": r.algo,
                "timesteps": r.timesteps,
                "wall_s": r.wall_seconds,
                "final_mean_reward": r.final_mean_reward,
                "sha256": r.sha256[:12],
                "path": r.model_path,
            }
            for r in results
        ]
    )
    metadata: dict[str, object] = {
        "episodes": len(training),
        "first_episode": keys[0],
        "last_episode": keys[-1],
        "models": dg.MetadataValue.md(table.to_markdown(index=False, floatfmt=".3f")),
        "reward_curve": png_markdown(png, "training reward"),
    }
    for r in results:
        metadata[f"{r.algo}_timesteps"] = r.timesteps
        metadata[f"{r.algo}_wall_seconds"] = r.wall_seconds
        metadata[f"{r.algo}_path"] = dg.MetadataValue.path(r.model_path)
    version = hashlib.sha256("|".join(r.sha256 for r in results).encode()).hexdigest()[:16]
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(version))
