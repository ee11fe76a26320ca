"""The figures the pipeline's checks judge a trained model by, from its training report.

A stage's report carries ``heldout_episodes``: one record per policy × valid episode,
``{policy, episode_key, final_value, total_return, unparsable, steps}`` (``unparsable``
counts the decisions of the episode the model's text did not parse into an action), with
``buy_and_hold`` among the policies; and ``extra.frac_reward_zero_std``: per training
step, the share of reward groups whose completions all scored the same (no gradient).

- parse rate on valid: 1 − Σ unparsable / Σ steps over the model's records.
- Δ vs buy-and-hold on valid: the model's total return minus buy-and-hold's, per episode
  both played, with the 95% interval of the mean every comparison with buy-and-hold uses
  (``stats.mean_ci``: a percentile bootstrap, 2000 seeded resamples; the learning check and
  the report's leaderboard give the same interval for the same values). Episodes that
  overlap (a moderator's two-month episodes start every month) are not independent: with
  ``block`` episodes per independent stretch the bootstrap resamples circular blocks of
  ``block`` episodes, and fewer than two effective episodes (n/block < 2) give no interval
  (a bootstrap would give a falsely narrow one there).
- zero-spread share: the mean of ``frac_reward_zero_std`` over the last tenth of the steps.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stocker_core.evaluation.stats import mean_ci

BUY_AND_HOLD = "buy_and_hold"
MIN_PARSE_RATE = 0.95
MAX_ZERO_SPREAD = 0.5
CI_METHOD = (
    "95% percentile bootstrap of the mean (arch, 2000 resamples; circular blocks of `block` episodes "
    "where episodes overlap; none below 2 effective episodes)"
)
CONFIDENCE = 0.95
REFERENCE_POLICIES = frozenset({BUY_AND_HOLD, "random", "council", "rule_council", "ideal", "greedy"})
"""Policies in a report that are baselines, not the trained model."""


@dataclass(frozen=True)
class ModelFigures:
    """What the checks show; a figure is None when the report cannot give it."""

    policy: str | None
    episodes: int
    parse_rate: float | None
    delta_mean: float | None
    delta_low: float | None
    delta_high: float | None
    paired_episodes: int
    zero_spread_last_tenth: float | None
    zero_spread_steps: int

    @property
    def parse_ok(self) -> bool | None:
        return None if self.parse_rate is None else self.parse_rate >= MIN_PARSE_RATE

    @property
    def beats_buy_and_hold(self) -> bool | None:
        """True only when the whole CI lies above zero; None without a CI."""
        return None if self.delta_low is None else self.delta_low > 0

    @property
    def groups_have_spread(self) -> bool | None:
        if self.zero_spread_last_tenth is None:
            return None
        return self.zero_spread_last_tenth <= MAX_ZERO_SPREAD


def model_policy(records: Sequence[Mapping[str, Any]], preferred: str) -> str | None:
    """``preferred`` when the records hold it, else the one non-reference policy (None if not one)."""
    names = {str(r.get("policy")) for r in records}
    if preferred in names:
        return preferred
    candidates = sorted(names - REFERENCE_POLICIES)
    return candidates[0] if len(candidates) == 1 else None


def parse_rate(records: Iterable[Mapping[str, Any]]) -> float | None:
    """1 − Σ unparsable / Σ steps (None without steps)."""
    steps = unparsable = 0
    for record in records:
        steps += int(record.get("steps") or 0)
        unparsable += int(record.get("unparsable") or 0)
    return None if steps == 0 else 1.0 - unparsable / steps


def deltas_vs_buy_and_hold(records: Sequence[Mapping[str, Any]], policy: str) -> list[float]:
    """The policy's total return minus buy-and-hold's per episode both played, in key order."""
    mine = {r["episode_key"]: float(r["total_return"]) for r in records if r.get("policy") == policy}
    base = {r["episode_key"]: float(r["total_return"]) for r in records if r.get("policy") == BUY_AND_HOLD}
    keys = sorted(set(mine) & set(base))
    values = [mine[k] - base[k] for k in keys]
    return [v for v in values if math.isfinite(v)]


def last_tenth_mean(values: Sequence[float]) -> float | None:
    """Mean of the last ⌈n/10⌉ values (None when empty)."""
    clean = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not clean:
        return None
    tail = clean[-math.ceil(len(clean) / 10) :]
    return sum(tail) / len(tail)


def model_figures(
    heldout_episodes: Sequence[Mapping[str, Any]] | None,
    frac_reward_zero_std: Sequence[float] | None,
    policy: str,
    block: int = 1,
    seed: int = 0,
) -> ModelFigures:
    """Every figure of the model checks (see the module docstring); ``seed`` seeds the
    bootstrap of the interval."""
    records = list(heldout_episodes or [])
    name = model_policy(records, policy) if records else None
    own = [r for r in records if r.get("policy") == name] if name else []
    deltas = deltas_vs_buy_and_hold(records, name) if name else []
    interval = mean_ci(deltas, CONFIDENCE, seed=seed, block=block) if deltas else None
    zero = list(frac_reward_zero_std) if frac_reward_zero_std is not None else None
    return ModelFigures(
        policy=name,
        episodes=len(own),
        parse_rate=parse_rate(own) if own else None,
        delta_mean=interval.mean if interval else None,
        delta_low=interval.low if interval else None,
        delta_high=interval.high if interval else None,
        paired_episodes=len(deltas),
        zero_spread_last_tenth=last_tenth_mean(zero) if zero else None,
        zero_spread_steps=len(zero or []),
    )
