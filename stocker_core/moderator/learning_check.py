"""Does the training loop learn? The plain part of the learning check: its configuration
and its verdict on backtests of a synthetic market with a planted signal of known strength.

The run itself (``stocker check-learning``) belongs to the pipeline layer above this
library: it builds the market with ``stocker materialize`` (``STOCKER_SOURCE=synthetic`` in a
temporary home, the variables of ``LearningCheckConfig.environment``), trains the moderator
(base → SFT → policy gradient) and the agent (warm start → decision fit → RL) on the train split as
the training assets do, plays every policy on the test split's non-overlapping episodes
(``non_overlapping``), every ticker pooled, and hands the rows to ``verdicts``.

Per policy, ``verdicts`` gives the mean excess total return over buy-and-hold per window,
its 95% interval (``stats.mean_ci``: windows resampled, the interval the report and the
model checks give too), the two-sided p-value of a one-sample t-test on the windows' excess
(``stats.t_test``), the smallest excess those windows detect, and ``captured``: its mean
excess over the oracle's (the oracle follows the planted signal through the pre-close
headlines: the ceiling of what the inputs allow). ``verdict_lines`` says what the numbers
mean and ``format_table`` prints them.

With ``ic = 0`` nothing leads returns, so no policy should beat buy-and-hold at p < 0.05;
the verdict says whether any did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stocker_core.errors import StockerError

POLICIES = ("oracle", "buy_and_hold", "council", "moderator_sft", "moderator_grpo", "agent_rl")
TRAINED = ("moderator_sft", "moderator_grpo", "agent_rl")
BENCHMARK = "buy_and_hold"
ALPHA = 0.05
BOOTSTRAP_REPS = 2000


class LearningCheckError(StockerError, RuntimeError):
    """The learning check could not build its market or train."""


@dataclass(frozen=True)
class LearningCheckConfig:
    """The synthetic market and the training budgets of one learning check."""

    ic: float = 0.3
    """At 0.3 the oracle beats buy-and-hold on the default test windows at t ~ 4 (p < 0.001); at
    0.1 it does not show at all (p 0.23): a check must have a ceiling it can see."""
    seed: int = 7
    """Seed of the synthetic market (``STOCKER_SYNTH_SEED``) and of the backtests."""
    tickers: int = 8
    """Synthetic tickers (``STOCKER_SYNTH_TICKERS``)."""
    years: float = 3.0
    """Years of sessions (``STOCKER_SYNTH_YEARS``)."""
    split: tuple[float, float, float] = (0.45, 0.10, 0.45)
    """train / valid / test shares: the test half gives the verdict its power (an edge of a
    planted IC of 0.1 is a daily information ratio of ~0.07 for the oracle: ~1,400 test days
    to show it at p < 0.01, ~5,600 for a policy that captures half of it)."""
    moderator: dict[str, Any] = field(
        default_factory=lambda: {
            "grpo_steps": 100,
            "grpo_prompts": 64,
            "sft_epochs": 1.0,
            "threads": 1,
        }
    )
    """Overrides of the moderator's ``TrainingConfig`` (every other field keeps its default)."""
    agent: dict[str, Any] = field(
        default_factory=lambda: {
            "sft_steps": 120,
            "rl_steps": 60,
            "max_train_pairs": 1200,
            "max_valid_pairs": 60,
            "eval_every": 30,
        }
    )
    """Overrides of the agent's ``AgentConfig`` (every other field keeps its default)."""
    policies: tuple[str, ...] = POLICIES
    """The policies played on the test windows: the oracle (the ceiling), buy-and-hold (the
    benchmark), the rule council and the trained policies."""
    model: str = "tiny"
    """The moderator's base model: ``tiny``, ``smollm2``, a Hugging Face id or a folder. A
    pretrained model trains with ``PRETRAINED_MODERATOR`` (the compact prompt, a fields head and
    LoRA below it); the agent is trained only with the tiny model (``trains_agent``)."""

    @property
    def pretrained(self) -> bool:
        return self.model != "tiny"

    @property
    def trains_agent(self) -> bool:
        """The agent trains (and ``agent_rl`` plays) only in the tiny model's check: its
        multi-turn traces through a pretrained model would cost hours on a CPU."""
        return not self.pretrained

    def moderator_overrides(self) -> dict[str, Any]:
        """The moderator's ``TrainingConfig`` overrides of this check (the pretrained recipe on
        top of ``moderator`` for a pretrained model)."""
        if not self.pretrained:
            return dict(self.moderator)
        return {**self.moderator, **PRETRAINED_MODERATOR, "model": self.model}

    def played(self) -> tuple[str, ...]:
        """The policies this check plays (``agent_rl`` only when the agent trains)."""
        return tuple(p for p in self.policies if self.trains_agent or p != "agent_rl")

    def quick(self) -> LearningCheckConfig:
        """The same market with token training budgets: checks the plumbing, not the learning."""
        from dataclasses import replace

        return replace(
            self,
            moderator={**self.moderator, "grpo_steps": 10, "sft_epochs": 0.3},
            agent={
                **self.agent,
                "sft_steps": 10,
                "rl_steps": 2,
                "decision_fit_steps": 4,
                "max_train_pairs": 40,
                "max_valid_pairs": 10,
                "eval_every": 2,
            },
        )

    def smoke(self) -> LearningCheckConfig:
        """``quick`` plus the moderator's smoke budget (``config.SMOKE``): a few states and steps
        per stage, one held-out episode."""
        from dataclasses import replace

        from stocker_core.moderator.config import SMOKE

        quick = self.quick()
        return replace(quick, moderator={**quick.moderator, **SMOKE})

    def environment(self, home: Path) -> dict[str, str]:
        """The variables a subprocess needs to build this market in ``home``."""
        return {
            "STOCKER_HOME": str(home),
            "DAGSTER_HOME": str(home / "dagster"),
            "STOCKER_SOURCE": "synthetic",
            "STOCKER_SYNTH_IC": repr(self.ic),
            "STOCKER_SYNTH_SEED": str(self.seed),
            "STOCKER_SYNTH_TICKERS": str(self.tickers),
            "STOCKER_SYNTH_YEARS": repr(self.years),
        }


PRETRAINED_MODERATOR: dict[str, Any] = {
    "readout": "fields_head",
    "head_layer": 10,
    "lora_layers": 2,
    "grpo_learning_rate": 1e-4,
    "prompt": "compact",
    "threads": 1,
}
"""What a pretrained moderator trains with in the check: the compact prompt (one length), the
model cut after block 10 and read by a fields head over the prompt's value positions
(``language_model.fields_head``: fitted in closed form by the SFT stage), LoRA on the two blocks below it
(the eight under them frozen and computed once per state: ``language_model.frozen_prefix``), the RL stage at
a learning rate of 1e-4, one thread. Chosen on the valid split and the train split's later days
(docs/results.md, "SmolLM2: a head over the value positions"); the recipe read from the answer
tokens before it (LoRA on the top 4 blocks) captured -4% of the oracle's edge."""

CAPTURE_BAR = 0.6
"""A trained policy learns the planted signal when it captures at least this share of the
oracle's excess, with its own excess over buy-and-hold at p < ALPHA."""


@dataclass
class PolicyVerdict:
    """One policy's excess over buy-and-hold on the held-out windows."""

    excess: float
    ci_low: float
    ci_high: float
    p_value: float
    captured: float | None
    windows: int
    t_stat: float = float("nan")
    min_detectable: float | None = None
    """The smallest mean excess this many windows tell from zero (p < 0.05, power 0.8)."""

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "excess": self.excess,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "t_stat": self.t_stat,
            "captured": self.captured,
            "windows": self.windows,
            "min_detectable": self.min_detectable,
        }


def non_overlapping(episodes: pd.DataFrame) -> list[str]:
    """Episode keys of each ticker whose windows do not overlap, earliest first (greedy)."""
    keys = []
    for _, group in episodes.sort_values(["ticker", "start"]).groupby("ticker", sort=True):
        last_end = None
        for row in group.itertuples(index=False):
            if last_end is None or pd.Timestamp(row.start) > last_end:
                keys.append(row.episode_key)
                last_end = pd.Timestamp(row.end)
    return keys


def excess_verdict(excess: np.ndarray, oracle_mean: float | None, seed: int) -> PolicyVerdict:
    """Mean excess, its 95% interval over windows (``stats.mean_ci``, seeded with ``seed``),
    the t-test p-value (``stats.t_test``), the smallest detectable excess and the share of
    the oracle's excess captured. With fewer than 2 windows or no spread the interval is the
    mean itself and p is 1."""
    from stocker_core.evaluation.significance import min_detectable_difference
    from stocker_core.evaluation.stats import mean_ci, t_test

    excess = np.asarray(excess, dtype=np.float64)
    n = len(excess)
    mean = float(excess.mean()) if n else float("nan")
    captured = mean / oracle_mean if oracle_mean and oracle_mean > 0 else None
    test = t_test(excess)
    interval = mean_ci(excess, reps=BOOTSTRAP_REPS, seed=seed) if test is not None else None
    if test is None or interval is None or interval.low is None or interval.high is None:
        return PolicyVerdict(mean, mean, mean, 1.0, captured, n)
    detectable = min_detectable_difference(float(excess.std(ddof=1)), n)
    return PolicyVerdict(
        mean, interval.low, interval.high, test.p_value, captured, n, test.statistic, detectable
    )


def verdicts(rows: pd.DataFrame, seed: int = 0) -> dict[str, PolicyVerdict]:
    """Per policy, its excess total return over buy-and-hold window by window (``rows``: one
    backtest row per policy and episode, with ``total_return``)."""
    table = rows.pivot_table(index="episode", columns="policy", values="total_return")
    if BENCHMARK not in table:
        raise LearningCheckError("the backtests hold no buy_and_hold rows: nothing to compare against")
    excess = table.sub(table[BENCHMARK], axis=0)
    oracle = float(excess["oracle"].mean()) if "oracle" in excess else None
    return {name: excess_verdict(excess[name].dropna().to_numpy(), oracle, seed) for name in table.columns}


def verdict_lines(ic: float, found: dict[str, PolicyVerdict]) -> list[str]:
    """What the numbers mean, in words."""
    lines = []
    winners = [n for n in TRAINED if n in found and found[n].p_value < ALPHA and found[n].excess > 0]
    if ic == 0:
        if winners:
            lines.append(
                f"ic=0 (no signal) but {', '.join(winners)} beat buy-and-hold at p < {ALPHA}: "
                "a false discovery, or a leak to look for"
            )
        else:
            lines.append(
                f"ic=0 (no signal): no trained policy beats buy-and-hold at p < {ALPHA}, as it should"
            )
        return lines
    oracle = found.get("oracle")
    if oracle is not None:
        smallest = (
            "n/a"
            if oracle.min_detectable is None or not oracle.excess > 0
            else f"{oracle.min_detectable / oracle.excess:.0%}"
        )
        lines.append(
            f"power: the oracle beats buy-and-hold by {oracle.excess:+.4f} a window "
            f"(t = {oracle.t_stat:.1f}, p = {oracle.p_value:.2g}, {oracle.windows} windows); "
            "the smallest capture these windows tell from zero"
            f" is about {smallest} (p < 0.05, power 0.8)"
        )
    for name in TRAINED:
        if name not in found:
            continue
        v = found[name]
        share = "n/a" if v.captured is None else f"{v.captured:.0%}"
        learned = v.captured is not None and v.captured >= CAPTURE_BAR and v.p_value < ALPHA and v.excess > 0
        lines.append(
            f"{name}: captures {share} of the oracle's excess, p = {v.p_value:.3g} vs buy-and-hold — "
            + (
                "it learns the planted signal"
                if learned
                else f"short of the bar (≥ {CAPTURE_BAR:.0%} at p < {ALPHA})"
            )
        )
    return lines


def format_table(result: dict[str, Any], policies: Sequence[str] = POLICIES) -> str:
    """The result as a plain table, one row per policy."""
    lines = [
        f"ic {result['ic']}, seed {result['seed']}, {len(result['tickers'])} tickers, "
        f"{result['windows']} non-overlapping test windows {' … '.join(result.get('test_span', []))}",
        f"{'policy':<16}{'excess':>9}{'95% CI':>22}{'t':>7}{'p':>9}{'captured':>10}",
    ]
    for name in policies:
        v = result["policies"].get(name)
        if v is None:
            lines.append(f"{name:<16}{'(not played)':>9}")
            continue
        captured = "–" if v["captured"] is None else f"{v['captured']:.0%}"
        ci = f"[{v['ci_low']:+.4f}, {v['ci_high']:+.4f}]"
        t_stat = v.get("t_stat", float("nan"))
        lines.append(
            f"{name:<16}{v['excess']:>+9.4f}{ci:>22}{t_stat:>7.1f}{v['p_value']:>9.3g}{captured:>10}"
        )
    lines += result["verdict"]
    lines.append(f"took {result['seconds']:.0f}s")
    return "\n".join(lines)
