"""The moderator's policy-gradient stage ("grpo"), continuing the SFT LoRA adapter.

The moderator's answer set is nine fixed actions, so there is nothing to sample: each
update takes ``grpo_prompts`` training states, scores all nine answers of each with the
model (``choices``) and with the training reward (``rewards``: the excess over
buy-and-hold by default), and follows the exact gradient of the expected reward under the
policy restricted to the nine (``policy_gradient.expected_reward_weights``). This is GRPO
with the whole group enumerated and weighted by its probability: no group is ever wasted
on identical samples (TRL's GRPOTrainer, which samples, left 84-98% of its groups without
spread on this task; TRL has no dynamic sampling to drop them). ``frac_reward_zero_std``
remains the share of states whose nine rewards are all equal.

CPU settings from TRAINING_NOTES: fp32, a learning rate that moves a LoRA (1e-3 for tiny),
one thread.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stocker_core.training.choices import ANSWERS, answer_logits
from stocker_core.training.config import TrainingConfig
from stocker_core.training.dataset import EpisodeContext
from stocker_core.training.generation import render_prompt
from stocker_core.training.models import LoadedModel
from stocker_core.training.policy_gradient import (
    PgLog,
    PgStep,
    apply_update,
    expected_reward_weights,
    trainable_optimizer,
    zero_spread_share,
)
from stocker_core.training.rewards import ExcessReward, RolloutReward, environment_answer_rewards
from stocker_core.training.runtime import Progress, quiet_libraries, seed_everything
from stocker_core.training.sft import StageResult


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
        excess = ExcessReward(contexts, horizon=config.reward_horizon)
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


def run_grpo(
    policy: LoadedModel,
    rows: Sequence[dict[str, Any]],
    contexts: dict[str, EpisodeContext],
    config: TrainingConfig,
    adapter_dir: Path,
    progress: Progress | None = None,
) -> tuple[StageResult, RewardTable]:
    """Train ``policy`` (a base with a trainable LoRA adapter) on ``rows``; save the adapter
    to ``adapter_dir``. Returns the stage result (its log is a ``PgLog``) and the reward table."""
    import torch

    quiet_libraries()
    seed_everything(config.seed, config.threads)
    started = time.perf_counter()
    table = reward_table(rows, contexts, config)
    if not table.rows:
        raise ValueError("no training state has a next session inside its episode: nothing to learn from")
    prompts = [render_prompt(policy, r["prompt_words"], r["prompt_text"]) for r in table.rows]
    rewards = torch.tensor(table.rewards, dtype=torch.float32, device=policy.device)
    optimizer = trainable_optimizer(policy.model, config.grpo_learning_rate)
    rng = np.random.default_rng(config.seed)
    log = PgLog(report_to=config.report_to, log_dir=adapter_dir.parent / "tensorboard" / adapter_dir.name)
    size = min(config.grpo_prompts, len(prompts))
    for step in range(1, config.grpo_steps + 1):
        pick = rng.choice(len(prompts), size=size, replace=False)
        logits = answer_logits(policy, [prompts[i] for i in pick])
        batch_rewards = rewards[torch.as_tensor(pick, device=rewards.device)]
        loss, pi = expected_reward_weights(logits, batch_rewards, config.scale_rewards)
        if config.entropy_coef:
            log_pi = torch.log_softmax(logits, dim=-1)
            loss = loss + config.entropy_coef * (log_pi.exp() * log_pi).sum(dim=-1).mean()
        loss_value = apply_update(policy.model, optimizer, loss)
        mean_pi = pi.mean(dim=0).cpu().numpy()
        log.add(
            PgStep(
                step=step,
                reward=float((pi * batch_rewards).sum(dim=-1).mean()),
                frac_reward_zero_std=zero_spread_share(table.rewards[pick]),
                loss=loss_value,
                actions={answer: float(p) for answer, p in zip(ANSWERS, mean_pi, strict=True)},
                extra={"best_answer_reward": float(batch_rewards.max(dim=-1).values.mean())},
            )
        )
        if progress is not None:
            progress("grpo", step, config.grpo_steps)
    log.close()
    adapter_dir.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(adapter_dir)
    return StageResult(adapter_dir, log, time.perf_counter() - started, config.grpo_steps), table
