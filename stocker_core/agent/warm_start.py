"""Supervised warm start: the base model learns to write the scripted agent's turns
(loss on the model's own turns only), so that it calls tools at all before RL."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.sequences import encode_trace
from stocker_core.agent.trace import Trace
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.policy_gradient import collate, token_logprobs


@dataclass
class WarmStartResult:
    """Steps taken, the loss curve [(step, loss)] and the wall time."""

    steps: int
    losses: list[tuple[int, float]] = field(default_factory=list)
    wall_seconds: float = 0.0


def warm_start(
    loaded: LoadedModel, traces: Sequence[Trace], config: AgentConfig, tools: list[dict[str, Any]]
) -> WarmStartResult:
    """Fine-tune ``loaded.model`` in place on ``traces`` for ``config.sft_steps`` steps
    (every weight for the tiny model; a LoRA merged back for a pretrained one)."""
    import numpy as np
    import torch

    started = time.perf_counter()
    result = WarmStartResult(0)
    if config.sft_steps == 0 or not traces:
        return result
    model = loaded.model
    lora = loaded.prompt_style != "words"
    if lora:
        from peft import get_peft_model

        from stocker_core.language_model.lora import lora_config

        model = get_peft_model(model, lora_config(config.lora_spec(), loaded))
    encoded = [encode_trace(loaded, t, tools, config.max_tool_calls) for t in traces]
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.sft_learning_rate, weight_decay=0.0)
    rng = np.random.default_rng(config.seed)
    model.train()
    for step in range(1, config.sft_steps + 1):
        pick = rng.choice(len(encoded), size=min(config.sft_batch_size, len(encoded)), replace=False)
        batch = collate(loaded.tokenizer.pad_token_id, [encoded[i] for i in pick], loaded.device)
        logp, mask = token_logprobs(model, batch)
        loss = -(logp * mask).sum() / mask.sum().clamp(min=1.0)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        result.losses.append((step, float(loss.detach())))
    model.eval()
    if lora:
        loaded.model = model.merge_and_unload()
    result.steps = config.sft_steps
    result.wall_seconds = time.perf_counter() - started
    return result
