"""The moderator's RL stage, continuing the SFT adapter: exact reward regression over the
nine answers, not GRPO.

The moderator's answer set is nine fixed actions, so there is nothing to sample: every
training state's nine answers are scored with the training reward (``rewards``: the excess
over buy-and-hold by default) once, in a ``RewardTable``, and each update scores the nine
answers of ``grpo_prompts`` states with the model (``choices``). The objective
(``TrainingConfig.objective``, ``answer_fit``) is by default the reward regression on the
market-relative excess reward, and the stage keeps its last averaged weights
(``checkpoint: last``; ``best_valid`` restores the best valid check instead): the recipe
measured in the docs' training page. The whole group of answers is enumerated instead of
sampled, so no group is ever wasted on identical samples (TRL's GRPOTrainer, which samples,
left 84-98% of its groups without spread on this task). The stage, its asset
(``moderator_grpo``) and its ``grpo_*`` settings keep their published names;
``frac_reward_zero_std`` remains the share of states whose nine rewards are all equal.

Measured CPU settings: fp32, a learning rate that moves a LoRA (1e-3 for tiny),
one thread.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stocker_core.language_model.checkpoints import StageResult, restore_trainable, trainable_state
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.policy_gradient import PgLog, zero_spread_share
from stocker_core.language_model.runtime import Progress, quiet_libraries, seed_everything
from stocker_core.moderator.answer_fit import (
    FitResult,
    FitSettings,
    answer_set,
    fit_answers,
)
from stocker_core.moderator.answers import ANSWERS
from stocker_core.moderator.config import TrainingConfig
from stocker_core.moderator.dataset import EpisodeContext
from stocker_core.moderator.rewards import ExcessReward, RolloutReward, environment_answer_rewards


@dataclass
class RewardTable:
    """The training reward of each answer at each usable row (rows without a next session
    inside their episode are dropped)."""

    rows: list[dict[str, Any]]
    rewards: np.ndarray
    """``[len(rows), 9]`` in ``ANSWERS`` order."""
    dropped: int

    @property
    def zero_spread(self) -> float:
        return zero_spread_share(self.rewards)


def reward_table(
    rows: Sequence[dict[str, Any]], contexts: dict[str, EpisodeContext], config: TrainingConfig
) -> RewardTable:
    """Every answer's reward at every row, computed once (the rewards are deterministic)."""
    kept, table = [], []
    if config.reward == "excess":
        excess = ExcessReward(contexts, horizon=config.reward_horizon, market_relative=config.market_relative)
        for row in rows:
            values = excess.answers(row, ANSWERS)
            if values is not None:
                kept.append(row)
                table.append(values)
    else:
        rollout = RolloutReward(contexts, k=config.rollout_k, continuation=config.continuation)
        for row in rows:
            kept.append(row)
            table.append(environment_answer_rewards(rollout, row, ANSWERS))
    rewards = np.asarray(table, dtype=np.float64).reshape(-1, len(ANSWERS))
    return RewardTable(list(kept), rewards, len(rows) - len(kept))


def capped(table: RewardTable, cap: int, seed: int) -> RewardTable:
    """At most ``cap`` of the table's rows (0: all), a seeded sample kept in order."""
    if not cap or len(table.rows) <= cap:
        return table
    keep = np.sort(np.random.default_rng(seed).choice(len(table.rows), size=cap, replace=False))
    return RewardTable([table.rows[i] for i in keep], table.rewards[keep], table.dropped)


def fit_settings(config: TrainingConfig, stage: str, rows: int) -> FitSettings:
    """The fit of a stage: ``sft`` (reward teacher: soft targets at ``sft_temperature`` for
    ``sft_epochs`` over the rows, or ``sft_max_steps``; it publishes its best valid check, step
    0 included, and with ``checkpoint: last`` keeps its last weights for the RL stage to continue
    from) or ``grpo`` (``objective`` at ``target_temperature`` for ``grpo_steps``, keeping
    ``checkpoint``'s weights)."""
    if stage == "sft":
        per_epoch = max(1, -(-rows // config.sft_batch_size))
        steps = (
            config.sft_max_steps if config.sft_max_steps > 0 else max(1, round(config.sft_epochs * per_epoch))
        )
        return FitSettings(
            objective="soft_target",
            temperature=config.sft_temperature,
            steps=steps,
            batch=config.sft_batch_size,
            learning_rate=config.sft_learning_rate,
            seed=config.seed,
            eval_every=config.eval_every,
            averaging=config.weight_averaging,
            by_side=config.decode == "side",
        )
    return FitSettings(
        objective=config.objective,
        temperature=config.target_temperature,
        steps=config.grpo_steps,
        batch=config.grpo_prompts,
        learning_rate=config.grpo_learning_rate,
        seed=config.seed,
        eval_every=config.eval_every,
        entropy_coef=config.entropy_coef,
        scale_rewards=config.scale_rewards,
        averaging=config.weight_averaging,
        by_side=config.decode == "side",
        keep_last=config.checkpoint == "last",
    )


def run_answer_fit(
    policy: LoadedModel,
    rows: Sequence[dict[str, Any]],
    contexts: dict[str, EpisodeContext],
    config: TrainingConfig,
    adapter_dir: Path,
    stage: str,
    valid: tuple[Sequence[dict[str, Any]], dict[str, EpisodeContext]] | None = None,
    progress: Progress | None = None,
) -> tuple[StageResult, RewardTable, FitResult]:
    """Fit ``policy`` (a base with a trainable adapter) to the answers' rewards on ``rows``
    (``answer_fit.fit_answers``), the checkpoint chosen on ``valid`` (rows, contexts); save the
    adapter to ``adapter_dir``. Returns the stage result, the train reward table and the fit."""
    quiet_libraries()
    seed_everything(config.seed, config.threads)
    started = time.perf_counter()
    table = capped(reward_table(rows, contexts, config), config.max_train_states, config.seed)
    if not table.rows:
        raise ValueError("no training state has a next session inside its episode: nothing to learn from")
    valid_set = None
    if valid is not None and valid[0]:
        valid_table = capped(reward_table(valid[0], valid[1], config), config.max_valid_states, config.seed)
        valid_set = answer_set(policy, valid_table.rows, valid_table.rewards)
    settings = fit_settings(config, stage, len(table.rows))
    log = PgLog(report_to=config.report_to, log_dir=adapter_dir.parent / "tensorboard" / adapter_dir.name)
    fit = fit_answers(
        policy,
        answer_set(policy, table.rows, table.rewards),
        settings,
        valid_set,
        stage=stage,
        progress=progress,
        log=log,
    )
    from stocker_core.language_model.fields_head import save_head

    adapter_dir.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(adapter_dir)
    save_head(policy.model, adapter_dir)
    _save_continuation(policy, fit, adapter_dir, stage == "sft" and config.checkpoint == "last")
    result = StageResult(adapter_dir, fit.log, time.perf_counter() - started, settings.steps, fit)
    return result, table, fit


def continue_dir(adapter_dir: Path) -> Path:
    """Where a stage that published its best valid check keeps its last weights for the next
    stage to continue from (absent when the two are the same)."""
    return adapter_dir / "continue"


def _save_continuation(policy: LoadedModel, fit: FitResult, adapter_dir: Path, wanted: bool) -> None:
    import shutil

    from stocker_core.language_model.fields_head import save_head

    target = continue_dir(adapter_dir)
    shutil.rmtree(target, ignore_errors=True)
    if not wanted or fit.last_state is None:
        return
    kept = trainable_state(policy.model)
    restore_trainable(policy.model, fit.last_state)
    policy.model.save_pretrained(target)
    save_head(policy.model, target)
    restore_trainable(policy.model, kept)


def run_reward_regression(
    policy: LoadedModel,
    rows: Sequence[dict[str, Any]],
    contexts: dict[str, EpisodeContext],
    config: TrainingConfig,
    adapter_dir: Path,
    progress: Progress | None = None,
    valid: tuple[Sequence[dict[str, Any]], dict[str, EpisodeContext]] | None = None,
) -> tuple[StageResult, RewardTable]:
    """The RL stage: continue ``policy``'s adapter on the reward table (``config.objective``),
    the checkpoint chosen on ``valid``; save the adapter to ``adapter_dir``."""
    result, table, _ = run_answer_fit(policy, rows, contexts, config, adapter_dir, "grpo", valid, progress)
    return result, table
