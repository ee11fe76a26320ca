"""RL with tool calls: our own rollout loop and a GRPO-style update on a LoRA adapter.

Each step draws ``rl_prompts_per_step`` train pairs and samples ``num_generations`` whole
multi-turn rollouts of each (real tool answers between turns), scores every rollout
(result + format + tool), and takes one gradient step on
``-mean_token(A · log π(own tokens))`` with the group-relative advantage
``A = (r − mean_group) / (std_group + ε)`` — GRPO with one iteration per batch (so the
PPO ratio is 1 and clipping never binds) and no KL term, as TRL's defaults
(``num_iterations=1``, ``beta=0``, token-level ``dapo`` normalisation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.data import AgentData
from stocker_core.agent.model import ModelWriter
from stocker_core.agent.scoring import run_scored
from stocker_core.agent.sequences import collate, encode_trace, token_logprobs
from stocker_core.agent.trace import Trace
from stocker_core.training.models import LoadedModel

ADVANTAGE_EPS = 1e-4


def agent_lora_config(config: AgentConfig) -> Any:
    """LoRA on every linear layer but the output head."""
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora_r, lora_alpha=config.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM"
    )


def group_advantages(rewards: Sequence[float], group: int) -> np.ndarray:
    """(r − group mean) / (group std + ε) for consecutive groups of ``group`` rewards
    (population std; a group whose rewards are all equal gets zeros)."""
    r = np.asarray(rewards, dtype=np.float64).reshape(-1, group)
    centred = r - r.mean(axis=1, keepdims=True)
    std = r.std(axis=1, keepdims=True)
    return np.where(std > 0, centred / (std + ADVANTAGE_EPS), 0.0).reshape(-1)


@dataclass
class RlStep:
    """One update: mean reward and its parts over the sampled rollouts, the loss, and the
    share of groups that carried a gradient (rewards not all equal)."""

    step: int
    reward: float
    result: float
    format: float
    tool: float
    loss: float
    informative_groups: float


@dataclass
class RlLog:
    steps: list[RlStep] = field(default_factory=list)


def rl_step(
    loaded: LoadedModel,
    optimizer: Any,
    pairs: Sequence[tuple[str, pd.Timestamp]],
    data: dict[str, AgentData],
    config: AgentConfig,
    step: int,
) -> RlStep:
    """Sample rollouts for ``pairs`` (each repeated ``num_generations`` times), score, update."""
    import torch

    group = config.num_generations
    repeated = [p for p in pairs for _ in range(group)]
    writer = ModelWriter(loaded, config, sample=True)
    traces = run_scored(writer, repeated, data, config, "agent_rl")
    rewards = [t.scores.total for t in traces]  # type: ignore[union-attr]
    advantages = group_advantages(rewards, group)
    informative = float(np.mean(np.abs(advantages.reshape(-1, group)).sum(axis=1) > 0))
    loss_value = 0.0
    keep = [i for i, a in enumerate(advantages) if a != 0.0]
    if keep:
        model = loaded.model
        model.train()
        encoded = [encode_trace(loaded, traces[i], writer.tools, config.max_tool_calls) for i in keep]
        batch = collate(loaded, encoded)
        logp, mask = token_logprobs(model, batch)
        adv = torch.tensor(advantages[keep], dtype=torch.float32, device=logp.device)[:, None]
        loss = -(adv * logp * mask).sum() / mask.sum().clamp(min=1.0)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        optimizer.step()
        model.eval()
        loss_value = float(loss.detach())
    return _record(step, traces, loss_value, informative)


def _record(step: int, traces: list[Trace], loss: float, informative: float) -> RlStep:
    scores = [t.scores for t in traces if t.scores is not None]
    n = max(1, len(scores))
    return RlStep(
        step,
        sum(s.total for s in scores) / n,
        sum(s.result for s in scores) / n,
        sum(s.format for s in scores) / n,
        sum(s.tool for s in scores) / n,
        loss,
        informative,
    )


def train_rl(
    loaded: LoadedModel,
    train_pairs: Sequence[tuple[str, pd.Timestamp]],
    data: dict[str, AgentData],
    config: AgentConfig,
    on_eval: Callable[[int], None] | None = None,
) -> RlLog:
    """Wrap ``loaded.model`` in a fresh LoRA adapter and run ``config.rl_steps`` updates;
    ``on_eval(step)`` is called every ``eval_every`` steps and after the last."""
    import torch
    from peft import get_peft_model

    loaded.model = get_peft_model(loaded.model, agent_lora_config(config))
    params = [p for p in loaded.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.rl_learning_rate, weight_decay=0.0)
    rng = np.random.default_rng(config.seed + 1)
    log = RlLog()
    for step in range(1, config.rl_steps + 1):
        pick = rng.choice(
            len(train_pairs), size=min(config.rl_prompts_per_step, len(train_pairs)), replace=False
        )
        log.steps.append(rl_step(loaded, optimizer, [train_pairs[i] for i in pick], data, config, step))
        if on_eval is not None and (step % config.eval_every == 0 or step == config.rl_steps):
            on_eval(step)
    return log
