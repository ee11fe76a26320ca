"""RL with tool calls: our own rollout loop, updated by the one policy-gradient home.

Each step draws ``rl_prompts_per_step`` train pairs and samples ``num_generations`` whole
multi-turn rollouts of each (real tool answers between turns), scores every rollout
(graded result + format + tool), and takes one gradient step on
``-mean_token(A · log π(own tokens))`` with the group-relative advantage
``A = (r − mean_group) / (std_group + ε)`` (``language_model.policy_gradient``) — GRPO with one
iteration per batch (so the PPO ratio is 1 and clipping never binds) and no KL term, as
TRL's defaults (``num_iterations=1``, ``beta=0``, token-level ``dapo`` normalisation).
Groups without spread carry no gradient and are skipped; their share is logged as
``frac_reward_zero_std`` with the decision mix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.data import AgentData
from stocker_core.agent.decision_fit import decision_loss
from stocker_core.agent.model import ModelWriter
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.scoring import run_scored
from stocker_core.agent.sequences import encode_trace
from stocker_core.agent.trace import Trace
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.lora import lora_config
from stocker_core.language_model.policy_gradient import (
    PgLog,
    PgStep,
    action_shares,
    apply_update,
    collate,
    group_advantages,
    token_logprobs,
    trainable_optimizer,
    zero_spread_share,
)


def rl_step(
    loaded: LoadedModel,
    optimizer: Any,
    pairs: Sequence[tuple[str, pd.Timestamp]],
    data: dict[str, AgentData],
    config: AgentConfig,
    step: int,
) -> PgStep:
    """Sample rollouts for ``pairs`` (each repeated ``num_generations`` times), score, update."""
    import torch

    group = config.num_generations
    repeated = [p for p in pairs for _ in range(group)]
    writer = ModelWriter(loaded, config, sample=True)
    traces = run_scored(writer, repeated, data, config, "agent_rl")
    rewards = [t.scores.total for t in traces]  # type: ignore[union-attr]
    advantages = group_advantages(rewards, group)
    loss_value = 0.0
    keep = [i for i, a in enumerate(advantages) if a != 0.0]
    model = loaded.model
    loss = None
    if keep:
        model.train()
        encoded = [encode_trace(loaded, traces[i], writer.tools, config.max_tool_calls) for i in keep]
        batch = collate(loaded.tokenizer.pad_token_id, encoded, loaded.device)
        logp, mask = token_logprobs(model, batch)
        adv = torch.tensor(advantages[keep], dtype=torch.float32, device=logp.device)[:, None]
        loss = -(adv * logp * mask).sum() / mask.sum().clamp(min=1.0)
    if config.exact_decision:
        exact = decision_loss(loaded, traces, writer.tools, config)
        if exact is not None:
            loss = exact if loss is None else loss + exact
    if loss is not None:
        loss_value = apply_update(model, optimizer, loss)
    return _record(step, traces, loss_value, np.asarray(rewards).reshape(-1, group))


def _record(step: int, traces: list[Trace], loss: float, grouped: np.ndarray) -> PgStep:
    scores = [t.scores for t in traces if t.scores is not None]
    n = max(1, len(scores))
    return PgStep(
        step=step,
        reward=sum(s.total for s in scores) / n,
        frac_reward_zero_std=zero_spread_share(grouped),
        loss=loss,
        actions=action_shares([t.action for t in traces], DECISIONS),
        extra={
            "result": sum(s.result for s in scores) / n,
            "format": sum(s.format for s in scores) / n,
            "tool": sum(s.tool for s in scores) / n,
        },
    )


def train_rl(
    loaded: LoadedModel,
    train_pairs: Sequence[tuple[str, pd.Timestamp]],
    data: dict[str, AgentData],
    config: AgentConfig,
    on_eval: Callable[[int], None] | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> PgLog:
    """Wrap ``loaded.model`` in a fresh LoRA adapter and run ``config.rl_steps`` updates;
    ``on_eval(step)`` is called with the fresh adapter (step 0), every ``eval_every`` steps and
    after the last."""
    from peft import get_peft_model

    loaded.model = get_peft_model(loaded.model, lora_config(config.lora_spec(), loaded))
    if on_eval is not None:
        on_eval(0)
    optimizer = trainable_optimizer(loaded.model, config.rl_learning_rate)
    rng = np.random.default_rng(config.seed + 1)
    log = PgLog()
    for step in range(1, config.rl_steps + 1):
        pick = rng.choice(
            len(train_pairs), size=min(config.rl_prompts_per_step, len(train_pairs)), replace=False
        )
        log.add(rl_step(loaded, optimizer, [train_pairs[i] for i in pick], data, config, step))
        if on_step is not None:
            on_step(step, config.rl_steps)
        if on_eval is not None and (step % config.eval_every == 0 or step == config.rl_steps):
            on_eval(step)
    return log
