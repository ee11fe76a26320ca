"""Fitting the agent's decision to its known results on every train pair, with the checkpoint
chosen on the valid split: the stage between the format warm start and RL.

The warm start's traces (the format teacher's tool script, each answer read back) end in a
decision whose three results are all known from the forward return (``grpo.decision_batch``).
So nothing is sampled: each update scores BUY / SELL / HOLD at the decision of ``batch`` train
traces and follows ``config.objective`` (``grpo.decision_objective``), while the same forward
pass keeps the format: cross-entropy on the trace's other written tokens. RL alone sees
``rl_steps × rl_prompts_per_step`` decisions, a few noisy ones per pair; this stage sees the
whole train split many times over.

Every ``decision_fit_eval_every`` steps (and before the first) the greedy decisions on the valid
traces are scored by their results; the best checkpoint is restored at the end.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.rewards import result_score
from stocker_core.agent.sequences import encode_trace
from stocker_core.agent.trace import Trace
from stocker_core.language_model.checkpoints import restore_trainable, trainable_state
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.policy_gradient import (
    apply_update,
    collate,
    expected_reward_weights,
    reward_regression_loss,
    soft_target_loss,
    trainable_optimizer,
)

EVAL_CHUNK = 256


@dataclass
class DecisionFitResult:
    """Steps taken, the valid curve [(step, mean result of the greedy decisions)], the kept
    step, the loss curve and the wall time."""

    steps: int = 0
    valid_curve: list[tuple[int, float]] = field(default_factory=list)
    best_step: int = 0
    losses: list[tuple[int, float]] = field(default_factory=list)
    wall_seconds: float = 0.0


@dataclass
class DecisionBatch:
    """Encoded traces that answered, the position of each decision token, and the three
    decisions' results ``[n, 3]`` in ``DECISIONS`` order (HOLD keeps the trace's held position,
    costs charged)."""

    rows: list[tuple[list[int], list[int]]]
    positions: list[int]
    results: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def subset(self, index: Sequence[int]) -> DecisionBatch:
        return DecisionBatch(
            [self.rows[i] for i in index], [self.positions[i] for i in index], self.results[list(index)]
        )


def decision_batch(
    loaded: LoadedModel, traces: Sequence[Trace], tools: list, config: AgentConfig
) -> DecisionBatch | None:
    """The decisions of ``traces`` with their tool turns fixed, each with all three results
    known from the forward return. Word-level models only (one token per decision); None when
    no trace answered or the model is a chat model."""
    if loaded.prompt_style != "words":
        return None
    decision_ids = set(loaded.tokenizer.convert_tokens_to_ids(list(DECISIONS)))
    rows, positions, results = [], [], []
    for trace in traces:
        if trace.decision is None or trace.forward_return is None:
            continue
        ids, mask = encode_trace(loaded, trace, tools, config.max_tool_calls)
        spots = [k for k, (t, m) in enumerate(zip(ids, mask, strict=True)) if m and t in decision_ids]
        if not spots:
            continue
        rows.append((ids, mask))
        positions.append(spots[-1])
        held = 0.5 if trace.held is None else trace.held
        results.append(
            [
                config.w_result
                * result_score(
                    d, trace.forward_return, config.theta, config.result_mode, held, config.transaction_cost
                )
                for d in DECISIONS
            ]
        )
    if not rows:
        return None
    return DecisionBatch(rows, positions, np.asarray(results, dtype=np.float64))


def decision_objective(choice: Any, results: Any, config: AgentConfig, unit: float | None = None) -> Any:
    """The loss over the decisions by ``config.objective``: cross-entropy toward
    softmax(result / τ) (``soft_target``), least squares toward the centred results
    (``reward_regression``) or the exact expected-result gradient; τ is in units of the
    results' spread within decisions (``unit``, else this batch's)."""
    if unit is None:
        centred = results - results.mean(dim=-1, keepdim=True)
        unit = float(centred.std().clamp_min(1e-6))
    if config.objective == "soft_target":
        return soft_target_loss(choice, results / unit, config.target_temperature)[0]
    if config.objective == "reward_regression":
        return reward_regression_loss(choice, results / unit, config.target_temperature)[0]
    return expected_reward_weights(choice, results, scale="batch")[0]


def decision_loss(loaded: LoadedModel, traces: Sequence[Trace], tools: list, config: AgentConfig) -> Any:
    """A loss over the final decision (BUY / SELL / HOLD) of every rollout that answered, with
    its tool turns fixed: each decision's result is known from the forward return (HOLD keeps
    the rollout's held position, costs charged), so the three are scored, not sampled
    (``decision_objective``). Word-level models only; None when no rollout answered or the
    model is a chat model."""
    import torch

    batch = decision_batch(loaded, traces, tools, config)
    if batch is None:
        return None
    choice, _ = decision_forward(loaded, batch)
    results = torch.tensor(batch.results, dtype=torch.float32, device=choice.device)
    return decision_objective(choice, results, config)


def decision_forward(loaded: LoadedModel, batch: DecisionBatch) -> tuple[Any, Any]:
    """(log-probabilities of BUY / SELL / HOLD at each decision [n, 3] with gradient, the mean
    cross-entropy of the traces' other written tokens)."""
    import torch

    decision_ids = loaded.tokenizer.convert_tokens_to_ids(list(DECISIONS))
    encoded = collate(loaded.tokenizer.pad_token_id, batch.rows, loaded.device)
    logits = loaded.model(input_ids=encoded.input_ids, attention_mask=encoded.attention_mask).logits
    rows = torch.arange(len(batch), device=logits.device)
    at = torch.tensor(batch.positions, device=logits.device) - 1  # the logits that predict the decision
    choice = torch.log_softmax(logits[rows, at].float(), dim=-1)[:, decision_ids]
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    targets = encoded.input_ids[:, 1:]
    written = encoded.learn_mask[:, 1:].clone().float()
    written[rows, at] = 0.0  # the decision is learned from its results, not copied
    token = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    format_loss = -(token * written).sum() / written.sum().clamp(min=1.0)
    return choice, format_loss


def greedy_results(loaded: LoadedModel, batch: DecisionBatch) -> np.ndarray:
    """The result of each trace's most likely decision."""
    import torch

    chosen = []
    with torch.no_grad():
        for start in range(0, len(batch), EVAL_CHUNK):
            part = batch.subset(range(start, min(len(batch), start + EVAL_CHUNK)))
            chosen.append(decision_forward(loaded, part)[0].argmax(dim=-1).cpu().numpy())
    picks = np.concatenate(chosen) if chosen else np.zeros(0, dtype=int)
    return batch.results[np.arange(len(picks)), picks]


def fit_decisions(
    loaded: LoadedModel, train: DecisionBatch, valid: DecisionBatch | None, config: AgentConfig
) -> DecisionFitResult:
    """Train ``loaded.model``'s trainable weights on ``train``'s decisions for
    ``config.decision_fit_steps`` steps; keep the checkpoint with the best greedy valid result
    (step 0 included, so the stage never ends worse on valid than it began)."""
    import torch

    started = time.perf_counter()
    result = DecisionFitResult()
    if config.decision_fit_steps == 0 or not len(train):
        return result
    model = loaded.model
    optimizer = trainable_optimizer(model, config.decision_fit_learning_rate)
    results = torch.tensor(train.results, dtype=torch.float32, device=loaded.device)
    centred = train.results - train.results.mean(axis=1, keepdims=True)
    unit = float(centred.std()) or 1.0
    rng = np.random.default_rng(config.seed + 2)
    size = min(config.decision_fit_batch, len(train))
    best_score, best_state = -np.inf, None

    def check(step: int) -> None:
        nonlocal best_score, best_state
        if valid is None or not len(valid):
            return
        model.eval()
        score = float(greedy_results(loaded, valid).mean())
        result.valid_curve.append((step, score))
        if score > best_score:
            best_score, best_state, result.best_step = score, trainable_state(model), step

    check(0)
    for step in range(1, config.decision_fit_steps + 1):
        pick = rng.choice(len(train), size=size, replace=False)
        model.train()
        choice, format_loss = decision_forward(loaded, train.subset(pick))
        loss = decision_objective(choice, results[torch.as_tensor(pick, device=results.device)], config, unit)
        loss_value = apply_update(model, optimizer, loss + format_loss)
        result.losses.append((step, loss_value))
        if step % config.decision_fit_eval_every == 0 or step == config.decision_fit_steps:
            check(step)
    if best_state is not None:
        restore_trainable(model, best_state)
    model.eval()
    result.steps = config.decision_fit_steps
    result.wall_seconds = time.perf_counter() - started
    return result
