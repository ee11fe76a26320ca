"""Does the training loop learn? A synthetic market with a planted signal of known strength,
the training on its train split, and a verdict on its held-out (test) split.

1. ``STOCKER_SOURCE=synthetic`` in a temporary home: ``stocker materialize`` builds the
   market, env, text and council groups (a subprocess: the real assets, their checks and
   the warehouse), then the chronological splits.
2. The moderator (base → SFT → policy gradient) and the agent (warm start → RL) train on
   the train split with their own configurations, exactly as the training assets do.
3. ``evaluation.backtest_partitions`` plays the policies on the test split's
   non-overlapping episodes, every ticker pooled. For each policy: the mean excess total
   return over buy-and-hold per window, its 95% bootstrap CI (windows resampled, ``arch``),
   the two-sided p-value of a one-sample t-test on the windows' excess, and ``captured``,
   its mean excess over the oracle's (the oracle follows the planted signal through the
   pre-close headlines: the ceiling of what the inputs allow).

With ``ic = 0`` nothing leads returns, so no policy should beat buy-and-hold at p < 0.05;
the verdict says whether any did.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stocker_core.config import Settings, use_settings
from stocker_core.errors import StockerError

POLICIES = ("oracle", "buy_and_hold", "council", "moderator_sft", "moderator_grpo", "agent_rl")
TRAINED = ("moderator_sft", "moderator_grpo", "agent_rl")
BENCHMARK = "buy_and_hold"
DATA_GROUPS = "market,env,text,council"
SKIPPED = "charts,ideal_trajectories"
"""Assets nothing in the check reads: chart PNGs (the rule council reads bars) and the stored
ideal paths (the environment solves its own; the SFT teacher uses that)."""
ALPHA = 0.05
BOOTSTRAP_REPS = 2000

Say = Callable[[str], None]


class LearningCheckError(StockerError, RuntimeError):
    """The learning check could not build its market or train."""


@dataclass(frozen=True)
class LearningCheckConfig:
    """The synthetic market and the training budgets of one learning check."""

    ic: float = 0.3
    """At 0.3 the oracle beats buy-and-hold on the default test windows at t ~ 4 (p < 0.001); at
    0.1 it does not show at all (p 0.23): a check must have a ceiling it can see."""
    seed: int = 7
    tickers: int = 8
    years: float = 3.0
    split: tuple[float, float, float] = (0.45, 0.10, 0.45)
    """train / valid / test shares: the test half gives the verdict its power (an edge of a
    planted IC of 0.1 is a daily information ratio of ~0.07 for the oracle: ~1,400 test days
    to show it at p < 0.01, ~5,600 for a policy that captures half of it)."""
    moderator: dict[str, Any] = field(
        default_factory=lambda: {"grpo_steps": 300, "grpo_prompts": 64, "sft_epochs": 1.0, "threads": 1}
    )
    agent: dict[str, Any] = field(
        default_factory=lambda: {
            "sft_steps": 120,
            "rl_steps": 60,
            "max_train_pairs": 1200,
            "max_valid_pairs": 60,
            "eval_every": 30,
        }
    )
    policies: tuple[str, ...] = POLICIES

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
                "max_train_pairs": 40,
                "max_valid_pairs": 10,
                "eval_every": 2,
            },
        )

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
    """Mean excess, its bootstrap 95% CI over windows, the t-test p-value and the share captured."""
    from arch.bootstrap import IIDBootstrap
    from scipy import stats

    from stocker_core.evaluation.significance import min_detectable_difference

    excess = np.asarray(excess, dtype=np.float64)
    n = len(excess)
    mean = float(excess.mean()) if n else float("nan")
    t_stat, detectable = float("nan"), None
    if n >= 2 and np.ptp(excess) > 0:
        bootstrap = IIDBootstrap(excess, seed=seed)
        low, high = bootstrap.conf_int(np.mean, reps=BOOTSTRAP_REPS, method="percentile").ravel()
        test = stats.ttest_1samp(excess, 0.0)
        p_value, t_stat = float(test.pvalue), float(test.statistic)
        detectable = min_detectable_difference(float(excess.std(ddof=1)), n)
    else:
        low = high = mean
        p_value = 1.0
    captured = mean / oracle_mean if oracle_mean and oracle_mean > 0 else None
    return PolicyVerdict(mean, float(low), float(high), p_value, captured, n, t_stat, detectable)


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


def _materialize(config: LearningCheckConfig, home: Path, say: Say) -> None:
    env = {**os.environ, **config.environment(home)}
    (home / "dagster").mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "stocker_assets.cli",
        "materialize",
        "--groups",
        DATA_GROUPS,
        "--skip",
        SKIPPED,
    ]
    say(
        f"building the synthetic market in {home}: "
        f"stocker materialize --groups {DATA_GROUPS} --skip {SKIPPED}"
    )
    started = time.perf_counter()
    tail: list[str] = []
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        for line in process.stdout or ():
            line = line.rstrip()
            tail = [*tail[-24:], line]
            if line:
                say(f"  materialize: {line}")
    if process.returncode != 0:
        raise LearningCheckError("materializing the synthetic market failed:\n" + "\n".join(tail))
    say(f"market built in {time.perf_counter() - started:.0f}s")


def settings_for(config: LearningCheckConfig, home: Path) -> Settings:
    """The Settings of the check's market (the same variables the subprocess saw)."""
    saved = {k: os.environ.get(k) for k in config.environment(home)}
    os.environ.update(config.environment(home))
    try:
        return Settings()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_learning_check(
    config: LearningCheckConfig, home: Path | None = None, say: Say | None = None
) -> dict[str, Any]:
    """Build, train, evaluate; the JSON-ready result (``ic``, ``seed``, ``tickers``,
    ``windows``, ``policies``, ``verdict``, ``seconds``)."""
    say = say or (lambda message: None)
    started = time.perf_counter()
    home = Path(home) if home is not None else Path(tempfile.mkdtemp(prefix="stocker-learning-"))
    _materialize(config, home, say)
    settings = settings_for(config, home)
    with use_settings(settings):
        return _train_and_judge(config, settings, say, started)


def _train_and_judge(
    config: LearningCheckConfig, settings: Settings, say: Say, started: float
) -> dict[str, Any]:
    from stocker_core.agent.config import agent_config
    from stocker_core.agent.training import train_agent
    from stocker_core.evaluation.pipeline import backtest_partitions, compute_and_store_splits
    from stocker_core.evaluation.splits import SplitConfig
    from stocker_core.training.config import load_config
    from stocker_core.training.pipeline import train
    from stocker_core.warehouse.db import Warehouse

    warehouse = Warehouse(settings.warehouse_path)
    train_share, valid_share, test_share = config.split
    splits = compute_and_store_splits(warehouse, SplitConfig(train_share, valid_share, test_share))
    tickers = sorted({r.ticker for r in splits.ranges})
    say(f"splits of {len(tickers)} tickers")

    def progress(stage: str, done: int, total: int) -> None:
        if total and (done == total or done % max(1, total // 10) == 0):
            say(f"moderator {stage}: step {done}/{total}")

    moderator = load_config(**config.moderator)
    reports = train(moderator, settings, progress=progress)
    for report in reports:
        say(f"moderator_{report.stage}: {report.wall_seconds:.0f}s, {report.steps} steps")
    agent = train_agent(agent_config(**config.agent), settings, warehouse, progress=say)
    say(f"agent_rl: {agent.wall_seconds:.0f}s")

    test_keys = _test_keys(warehouse, splits)
    say(f"backtesting {len(config.policies)} policies on {len(test_keys)} non-overlapping test windows")
    played = backtest_partitions(settings, warehouse, test_keys, list(config.policies), seed=config.seed)
    rows = pd.DataFrame([row for t in played for b in t.results.values() for row in b.rows()])
    failures = {name: why for t in played for name, why in t.failures.items()}
    found = verdicts(rows, config.seed)
    return {
        "ic": config.ic,
        "seed": config.seed,
        "tickers": tickers,
        "windows": int(rows["episode"].nunique()) if not rows.empty else 0,
        "test_span": [str(rows["start"].min()), str(rows["end"].max())] if not rows.empty else [],
        "policies": {name: found[name].as_dict() for name in config.policies if name in found},
        "failures": failures,
        "verdict": verdict_lines(config.ic, found),
        "training": training_summary(reports, agent),
        "seconds": round(time.perf_counter() - started, 1),
    }


SUMMARY_KEYS = (
    "kept_step",
    "kept_valid_reward",
    "entropy_last_tenth",
    "top_action_last",
    "objective",
    "teacher",
)


def training_summary(reports: Sequence[Any], agent: Any) -> dict[str, Any]:
    """A few numbers per trained policy (the per-step curves stay in each model's folder:
    ``steps.jsonl`` beside the moderator's adapters, the agent's ``agent.json``)."""
    summary: dict[str, Any] = {}
    for report in reports:
        if report.stage == "base":
            continue
        summary[report.name] = {
            "seconds": round(report.wall_seconds, 1),
            "steps": report.steps,
            "path": str(report.path),
            **{k: report.extra[k] for k in SUMMARY_KEYS if k in report.extra},
        }
    if agent is not None:
        last = agent.curves[-1] if agent.curves else {}
        summary["agent_rl"] = {
            "seconds": round(agent.wall_seconds, 1),
            "steps": len(agent.rl_log),
            "path": agent.run_dir,
            "kept_step": agent.kept_step,
            "valid_result_first": agent.curves[0]["result"] if agent.curves else None,
            "valid_result_last": last.get("result"),
        }
    return summary


def _test_keys(warehouse: Any, splits: Any) -> list[str]:
    """Keys of the stored episodes wholly inside a test split, non-overlapping per ticker."""
    episodes = warehouse.query(
        'SELECT key AS episode_key, ticker, start_date AS start, end_date AS "end" FROM env.episodes'
    )
    inside = [
        row.episode_key
        for row in episodes.itertuples(index=False)
        if splits.episode_split(row.ticker, [row.start, row.end]) == "test"
    ]
    return non_overlapping(episodes[episodes["episode_key"].isin(inside)])


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
