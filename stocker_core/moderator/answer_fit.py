"""Fitting the moderator's nine answers to their known rewards: the loop both the SFT warm
start (reward teacher) and the RL stage run.

Every training state has all nine answers' rewards (``reward_regression.RewardTable``), so nothing is
sampled: each update scores the nine answers of ``batch`` states and follows one of three
objectives (``TrainingConfig.objective``):

- ``reward_regression`` (the default): least squares between the answers' centred
  log-likelihoods and their centred rewards over ``target_temperature``; its minimiser's
  argmax is the answer of highest expected reward however noisy one day is.
- ``soft_target``: cross-entropy toward ``softmax(R̃ / τ)``, where ``R̃`` is the state's
  rewards centred and divided by the train table's spread. Its gradient on the logits,
  ``π − target``, stays large where the policy is confidently wrong.
- ``policy_gradient``: the exact expected-reward gradient ``Σ π(a)(R(a) − R̄)∇log π(a)``,
  which fades as ``π(1 − π)`` on such states (kept to compare).

Every ``eval_every`` steps (and before the first) the policy's greedy answers on the valid
states are scored by their rewards, on the moving average of the weights
(``weight_averaging``). Which weights are kept is ``TrainingConfig.checkpoint``: ``last``
(the default: the last averaged weights) or ``best_valid`` (the best check, restored).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stocker_core.language_model.checkpoints import restore_trainable, trainable_state
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.frozen_prefix import adapted_from
from stocker_core.language_model.policy_gradient import (
    PgLog,
    PgStep,
    apply_update,
    expected_reward_weights,
    reward_regression_loss,
    soft_target_loss,
    trainable_optimizer,
    zero_spread_share,
)
from stocker_core.moderator.answers import (
    ANSWERS,
    SIDE_COLUMNS,
    answer_logits,
    answer_probabilities,
    decided_indices,
    frozen_prefix,
    side_logits,
)

StepProgress = Callable[[int, int], None]


@dataclass
class AnswerSet:
    """Rendered prompts and every answer's reward, ``[len(prompts), 9]`` in ``ANSWERS`` order."""

    prompts: list[str]
    rewards: np.ndarray

    def __post_init__(self) -> None:
        if self.rewards.shape != (len(self.prompts), len(ANSWERS)):
            raise ValueError(f"rewards of shape {self.rewards.shape} for {len(self.prompts)} prompts")

    def greedy_reward(self, probabilities: np.ndarray, by_side: bool = False) -> float:
        """Mean reward of each state's decision (``answers.decided_indices``)."""
        if not len(self.prompts):
            return float("nan")
        chosen = decided_indices(probabilities, by_side)
        return float(self.rewards[np.arange(len(chosen)), chosen].mean())


@dataclass(frozen=True)
class FitSettings:
    """One fit: objective, temperature, budget, batch, learning rate, seed, valid cadence."""

    objective: str
    temperature: float
    steps: int
    batch: int
    learning_rate: float
    seed: int
    eval_every: int
    entropy_coef: float = 0.0
    scale_rewards: str = "batch"
    averaging: float = 0.0
    """Decay of an exponential moving average of the trainable weights (0: none); when set, the
    valid checks and the kept checkpoint are the average's."""
    by_side: bool = False
    """Decide by side (``decode: side``): the loss is taken over the three sides (each side's
    likelihood summed over its answers, its reward the full move's) and the valid checks
    score the side decision."""
    keep_last: bool = False
    """Keep the last weights (the moving average's, when averaging) instead of the best valid
    check's: the valid checks are still run and recorded."""
    frozen_prefix: bool = True
    """Compute the frozen lower blocks once for every state when only the top blocks train
    (``language_model.frozen_prefix``: the same numbers); False scores through the whole model each step."""


@dataclass
class FitResult:
    """The log of the updates, the valid curve and the step whose checkpoint was kept."""

    log: PgLog
    valid_curve: list[tuple[int, float]] = field(default_factory=list)
    best_step: int = 0
    last_state: dict[str, Any] | None = None
    """The last weights (the moving average's when averaging), kept when the fit ends on
    another checkpoint: where a following stage continues from (``continue_dir``)."""

    @property
    def best_valid(self) -> float | None:
        scores = dict(self.valid_curve)
        return scores.get(self.best_step)


def reward_scale(rewards: np.ndarray) -> float:
    """The spread of the rewards within states (std of the state-centred rewards), the unit of τ."""
    centred = rewards - rewards.mean(axis=1, keepdims=True)
    std = float(centred.std())
    return std if std > 0 else 1.0


def _update_average(average: dict[str, Any], model: Any, decay: float) -> None:
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name in average:
                average[name].mul_(decay).add_(parameter.detach(), alpha=1.0 - decay)


def _frozen_prefixes(
    policy: LoadedModel,
    train: AnswerSet,
    valid: AnswerSet | None,
    settings: FitSettings,
    stage: str,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[Any, Any]:
    """The frozen lower blocks run once for the train and the valid states (``None`` each
    where the fit scores through the whole model)."""
    # adapted in its top blocks only: the frozen blocks below run once for every state
    if progress is not None and settings.frozen_prefix and adapted_from(policy.model):
        states = len(train.prompts) + (len(valid.prompts) if valid is not None else 0)
        progress(f"{stage}: the frozen blocks of {states} states, once", 0, 0)
    train_prefix = frozen_prefix(policy, train.prompts) if settings.frozen_prefix else None
    valid_prefix = (
        frozen_prefix(policy, valid.prompts)
        if settings.frozen_prefix and train_prefix is not None and valid is not None and valid.prompts
        else None
    )
    return train_prefix, valid_prefix


def _objective_loss(logits: Any, batch_rewards: Any, unit: float, settings: FitSettings) -> tuple[Any, Any]:
    """The loss of ``settings.objective`` (plus the entropy term) and the policy it weighs."""
    import torch

    if settings.objective == "soft_target":
        loss, pi = soft_target_loss(logits, batch_rewards / unit, settings.temperature)
    elif settings.objective == "reward_regression":
        loss, pi = reward_regression_loss(logits, batch_rewards / unit, settings.temperature)
    elif settings.objective == "policy_gradient":
        loss, pi = expected_reward_weights(logits, batch_rewards, settings.scale_rewards)
    else:
        raise ValueError(f"unknown objective {settings.objective!r}: use soft_target or policy_gradient")
    if settings.entropy_coef:
        log_pi = torch.log_softmax(logits, dim=-1)
        loss = loss + settings.entropy_coef * (log_pi.exp() * log_pi).sum(dim=-1).mean()
    return loss, pi


def _step_record(
    step: int, answer_scores: Any, pi: Any, batch_rewards: Any, state_rewards: np.ndarray, loss_value: float
) -> PgStep:
    """The log line of one update: expected and best reward, the nine answers' shares, entropy."""
    import torch

    expected = float((pi * batch_rewards).sum(dim=-1).mean())
    best = float(batch_rewards.max(dim=-1).values.mean())
    pi = torch.softmax(answer_scores.detach(), dim=-1)  # the log reads the nine answers
    mean_pi = pi.mean(dim=0).cpu().numpy()
    entropy = float(-(pi * torch.log(pi.clamp_min(1e-12))).sum(dim=-1).mean())
    return PgStep(
        step=step,
        reward=expected,
        frac_reward_zero_std=zero_spread_share(state_rewards),
        loss=loss_value,
        actions={answer: float(p) for answer, p in zip(ANSWERS, mean_pi, strict=True)},
        extra={
            "best_answer_reward": best,
            "entropy": entropy,
        },
    )


def fit_answers(
    policy: LoadedModel,
    train: AnswerSet,
    settings: FitSettings,
    valid: AnswerSet | None = None,
    stage: str = "grpo",
    progress: Callable[[str, int, int], None] | None = None,
    log: PgLog | None = None,
) -> FitResult:
    """Train ``policy``'s trainable weights on ``train``; keep the checkpoint with the best
    greedy valid reward (step 0 included, so a fit never ends worse on valid than it began),
    or with ``keep_last`` the last weights."""
    import torch

    table = train.rewards[:, list(SIDE_COLUMNS)] if settings.by_side else train.rewards
    rewards = torch.tensor(table, dtype=torch.float32, device=policy.device)
    unit = reward_scale(table)
    optimizer = trainable_optimizer(policy.model, settings.learning_rate)
    rng = np.random.default_rng(settings.seed)
    result = FitResult(log if log is not None else PgLog())
    best_score, best_state = -np.inf, None
    size = min(settings.batch, len(train.prompts))

    average = trainable_state(policy.model) if settings.averaging else None
    train_prefix, valid_prefix = _frozen_prefixes(policy, train, valid, settings, stage, progress)

    if progress is not None:
        progress(stage, 0, settings.steps)

    def probabilities_on_valid() -> np.ndarray:
        if valid_prefix is not None:
            return valid_prefix.probabilities(policy.model)
        return answer_probabilities(policy, valid.prompts)

    def check(step: int) -> None:
        nonlocal best_score, best_state
        if valid is None or not valid.prompts:
            return
        current = None
        if average is not None:
            current = trainable_state(policy.model)
            restore_trainable(policy.model, average)
        score = valid.greedy_reward(probabilities_on_valid(), settings.by_side)
        result.valid_curve.append((step, score))
        if score > best_score:
            best_score, best_state, result.best_step = score, trainable_state(policy.model), step
        if current is not None:
            restore_trainable(policy.model, current)

    check(0)
    for step in range(1, settings.steps + 1):
        pick = rng.choice(len(train.prompts), size=size, replace=False)
        if train_prefix is not None:
            policy.model.train()
            answer_scores = train_prefix.logits(policy.model, pick)
        else:
            answer_scores = answer_logits(policy, [train.prompts[i] for i in pick])
        logits = side_logits(answer_scores) if settings.by_side else answer_scores
        batch_rewards = rewards[torch.as_tensor(pick, device=rewards.device)]
        loss, pi = _objective_loss(logits, batch_rewards, unit, settings)
        loss_value = apply_update(policy.model, optimizer, loss)
        if average is not None:
            _update_average(average, policy.model, settings.averaging)
        result.log.add(_step_record(step, answer_scores, pi, batch_rewards, train.rewards[pick], loss_value))
        if progress is not None:
            progress(stage, step, settings.steps)
        if step % settings.eval_every == 0 or step == settings.steps:
            check(step)
    if average is not None:
        restore_trainable(policy.model, average)
    if settings.keep_last:
        result.best_step = settings.steps
    elif best_state is not None and result.best_step != settings.steps:
        result.last_state = trainable_state(policy.model)
        restore_trainable(policy.model, best_state)
    result.log.close()
    return result


def answer_set(policy: LoadedModel, rows: Sequence[dict[str, Any]], rewards: np.ndarray) -> AnswerSet:
    """The rows' prompts rendered for ``policy`` with their reward table."""
    from stocker_core.moderator.generation import render_prompt

    prompts = [render_prompt(policy, r["prompt_words"], r["prompt_text"]) for r in rows]
    return AnswerSet(prompts, np.asarray(rewards, dtype=np.float64).reshape(len(prompts), len(ANSWERS)))
