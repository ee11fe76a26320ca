"""The one policy-gradient home: what the moderator's and the agent's RL share.

- Sequences: right-padded token batches and the log-probability of each written token.
- Group statistics: group-relative advantages and the share of groups without reward
  spread (``frac_reward_zero_std``, TRL's name), which carry no gradient.
- The update: ``-Σ w · log π(tokens)`` over a batch, gradient clipped, one optimizer step
  on the trainable (LoRA) weights.
- The log: one :class:`PgStep` per update (reward, zero-spread share, action shares, loss
  and any extras), as the curve the assets plot and ``models.runs`` stores, and optionally
  as TensorBoard events (``report_to="tensorboard"``, offline).

Two ways to form the weights ``w``:

- *sampled groups* (the agent): each prompt's ``G`` rollouts get
  ``A = (r − mean_group) / (std_group + ε)``, as GRPO with one iteration and no KL;
- *the exact expectation* (the moderator, whose answer set is nine fixed actions): every
  answer ``a`` of a prompt is scored, and ``w_a = π(a) · (R(a) − Σ_b π(b) R(b))``, the exact
  gradient of the expected reward ``Σ_a π(a) R(a)`` under the policy restricted to the
  answer set. No group is ever wasted on identical samples; only a state whose nine
  rewards are equal (nothing to choose) has no spread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ADVANTAGE_EPS = 1e-4
SPREAD_EPS = 1e-12
"""Rewards closer than this count as equal (a group without spread)."""


@dataclass
class Batch:
    """Right-padded ids, attention mask and the mask of learned tokens."""

    input_ids: Any
    attention_mask: Any
    learn_mask: Any


def collate(pad_id: int, encoded: Sequence[tuple[list[int], list[int]]], device: str) -> Batch:
    """Pad (ids, learn mask) pairs on the right into tensors on ``device``."""
    import torch

    width = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(encoded), width), dtype=torch.long)
    learn = torch.zeros((len(encoded), width), dtype=torch.float32)
    for row, (seq, mask) in enumerate(encoded):
        ids[row, : len(seq)] = torch.tensor(seq)
        attention[row, : len(seq)] = 1
        learn[row, : len(seq)] = torch.tensor(mask, dtype=torch.float32)
    return Batch(ids.to(device), attention.to(device), learn.to(device))


def token_logprobs(model: Any, batch: Batch) -> tuple[Any, Any]:
    """Log-probabilities of each next token and the matching learn mask (both [B, T-1])."""
    import torch

    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    targets = batch.input_ids[:, 1:]
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return logp, batch.learn_mask[:, 1:]


def sequence_logprobs(model: Any, batch: Batch) -> Any:
    """Summed log-probability of each row's learned tokens ([B])."""
    logp, mask = token_logprobs(model, batch)
    return (logp * mask).sum(dim=1)


def group_advantages(rewards: Sequence[float], group: int) -> np.ndarray:
    """(r − group mean) / (group std + ε) for consecutive groups of ``group`` rewards
    (population std; a group whose rewards are all equal gets zeros)."""
    r = np.asarray(rewards, dtype=np.float64).reshape(-1, group)
    centred = r - r.mean(axis=1, keepdims=True)
    std = r.std(axis=1, keepdims=True)
    return np.where(std > SPREAD_EPS, centred / (std + ADVANTAGE_EPS), 0.0).reshape(-1)


def zero_spread_share(rewards: np.ndarray) -> float:
    """Share of rows of ``rewards`` ([groups, members]) whose members all score the same."""
    r = np.asarray(rewards, dtype=np.float64)
    if r.size == 0:
        return 0.0
    return float(np.mean(np.ptp(r, axis=1) <= SPREAD_EPS))


def expected_reward_weights(logits: Any, rewards: Any, scale: str = "batch") -> tuple[Any, Any]:
    """The exact policy gradient's weights over a fixed answer set.

    ``logits`` [B, A] are the answers' summed log-probabilities (with gradient); ``rewards``
    [B, A] their rewards. The policy is the softmax over the A answers. Returns
    (surrogate loss whose gradient is −∇ E_π[R], the detached probabilities). ``scale``:
    ``"batch"`` divides the centred rewards by their batch std (the update's size does not
    depend on the reward's units), ``"none"`` keeps them raw.
    """
    import torch

    log_pi = torch.log_softmax(logits, dim=-1)
    pi = log_pi.exp().detach()
    baseline = (pi * rewards).sum(dim=-1, keepdim=True)
    centred = rewards - baseline
    if scale == "batch":
        centred = centred / (centred.std() + ADVANTAGE_EPS)
    elif scale != "none":
        raise ValueError(f"unknown reward scaling {scale!r}: use 'batch' or 'none'")
    loss = -(pi * centred * log_pi).sum(dim=-1).mean()
    return loss, pi


def soft_target_loss(
    log_likelihoods: Any, rewards: Any, temperature: float, renormalize: bool = False
) -> tuple[Any, Any]:
    """Cross-entropy toward ``softmax(rewards / τ)`` over a fixed answer set.

    ``log_likelihoods`` [B, A] are the answers' log-probabilities under the model (with
    gradient), ``rewards`` [B, A] in the unit ``τ`` is measured in. Without ``renormalize``
    the answers' own likelihoods are raised toward the target, so the loss also teaches the
    model to write one of them (free generation then parses); with it, only the choice among
    them is trained. Either way the gradient on a position's logits is ``π − target``: it
    does not fade where the policy is confidently wrong, unlike the expected-reward
    gradient's ``π(1 − π)``. Returns (loss, the detached policy over the answers)."""
    import torch

    within = torch.log_softmax(log_likelihoods, dim=-1)
    log_pi = within if renormalize else log_likelihoods
    target = torch.softmax(rewards / temperature, dim=-1).detach()
    loss = -(target * log_pi).sum(dim=-1).mean()
    return loss, within.exp().detach()


def reward_regression_loss(log_likelihoods: Any, rewards: Any, temperature: float) -> tuple[Any, Any]:
    """Least squares between the answers' centred log-likelihoods and their centred rewards
    over ``τ``, plus ``−log Σ_a p(a)`` (the answers keep the model's mass, so free generation
    still parses).

    The minimiser of the squared term at a state is the answers' *expected* centred reward over
    ``τ`` given what the prompt shows: its argmax is the answer with the highest expected
    reward however noisy one day's rewards are (the argmax of an average of ``softmax(R/τ)``
    targets need not be). Its gradient is the error itself, so it neither fades on a confident
    policy nor saturates. Returns (loss, the detached policy over the answers)."""
    import torch

    centred = log_likelihoods - log_likelihoods.mean(dim=-1, keepdim=True)
    target = (rewards - rewards.mean(dim=-1, keepdim=True)) / temperature
    mass = torch.logsumexp(log_likelihoods, dim=-1)
    loss = ((centred - target.detach()) ** 2).mean() - mass.mean()
    return loss, torch.softmax(log_likelihoods, dim=-1).detach()


def apply_update(model: Any, optimizer: Any, loss: Any, max_grad_norm: float = 1.0) -> float:
    """One optimizer step on ``loss`` over the trainable weights; returns the loss value."""
    import torch

    model.train()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], max_grad_norm)
    optimizer.step()
    model.eval()
    return float(loss.detach())


def trainable_optimizer(model: Any, learning_rate: float) -> Any:
    """AdamW over the trainable (LoRA) weights, no weight decay."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.0)


def action_shares(actions: Sequence[str], names: Sequence[str]) -> dict[str, float]:
    """Share of each of ``names`` among ``actions`` (names absent from the list count 0)."""
    counts = Counter(actions)
    n = max(1, len(actions))
    return {name: counts[name] / n for name in names}


@dataclass
class PgStep:
    """One update: mean reward, the share of groups without spread, the action mix, the loss."""

    step: int
    reward: float
    frac_reward_zero_std: float
    loss: float
    actions: dict[str, float] = field(default_factory=dict)
    extra: dict[str, float] = field(default_factory=dict)

    def flat(self) -> dict[str, float]:
        """Every value under one flat name (``action/buy q4``, ``result``, ...)."""
        values = {"reward": self.reward, "frac_reward_zero_std": self.frac_reward_zero_std, "loss": self.loss}
        values.update({f"action/{k}": v for k, v in self.actions.items()})
        values.update(self.extra)
        return values


@dataclass
class PgLog:
    """The steps of one policy-gradient run, and where they are also reported."""

    steps: list[PgStep] = field(default_factory=list)
    report_to: Sequence[str] = ()
    log_dir: Path | None = None
    _writer: Any = field(default=None, repr=False)

    def add(self, step: PgStep) -> None:
        self.steps.append(step)
        if "tensorboard" in self.report_to and self.log_dir is not None:
            if self._writer is None:
                from torch.utils.tensorboard import SummaryWriter

                self._writer = SummaryWriter(log_dir=str(self.log_dir))
            for name, value in step.flat().items():
                self._writer.add_scalar(name, value, step.step)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.flush()
            self._writer.close()
            self._writer = None

    def series(self, name: str) -> list[tuple[int, float]]:
        return [(s.step, s.flat()[name]) for s in self.steps if name in s.flat()]

    def last_tenth(self, name: str) -> float | None:
        """Mean of ``name`` over the last tenth of the steps (at least one step)."""
        values = [v for _, v in self.series(name)]
        if not values:
            return None
        tail = values[-max(1, len(values) // 10) :]
        return float(np.mean(tail))

    def records(self) -> list[dict[str, Any]]:
        return [asdict(s) for s in self.steps]
