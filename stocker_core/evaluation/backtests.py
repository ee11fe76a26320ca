"""Backtest runner: every policy of the registry on one or many episodes, metrics per policy.

Policies that registered a whole-episode plan (``env.plans``: the rules, the oracle) are planned
at once and graded together through the replay grader, which equals the environment
step for step; the council is played from its vote cache when every day is cached;
a policy that offers a batch decider (the trained models: moderators, agents, a2c/ppo)
plays every episode of a ``backtest_many`` call in lockstep, step t of all of them in
one model call; every other registered policy (random, later ones) plays the
environment step by step with ``make_policy``. Nothing here names a policy it must
know about: a new registry entry is backtested as is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from stocker_core.config import Settings
from stocker_core.env.actions import Side
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.grader import grade_batch, simulate_accounts
from stocker_core.env.plans import Plan
from stocker_core.env.policies import (
    BatchDecider,
    Policy,
    has_plan,
    is_upper_bound,
    make_batch_decider,
    make_policy,
    plan_for,
    policy_names,
)
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import InvalidNameError, StockerError
from stocker_core.evaluation.council_votes import VoteBook, cached_council
from stocker_core.evaluation.metrics import METRIC_NAMES, curve_metrics_many
from stocker_core.evaluation.stats import timing_tests

DISPLAY_ORDER = ("buy_and_hold", "hold", "random", "macd", "zmr", "forecast", "a2c", "ppo", "council")
TIMING_SHUFFLES = 1000


def ordered_policies(names: Sequence[str] | None = None) -> list[str]:
    """``names`` (default: every registered policy) in table order: baselines first,
    unknown-to-us policies next, hindsight upper bounds last."""
    names = list(dict.fromkeys(names or policy_names()))
    rank = {name: i for i, name in enumerate(DISPLAY_ORDER)}
    return sorted(names, key=lambda n: (is_upper_bound(n), rank.get(n, len(rank)), n))


def policy_label(name: str) -> str:
    """The name as tables show it: ``ideal (hindsight upper bound)``."""
    return f"{name} (hindsight upper bound)" if is_upper_bound(name) else name


def check_policy_names(names: Sequence[str]) -> list[str]:
    """The names, in table order; InvalidNameError listing the valid ones for any unknown."""
    known = set(policy_names(opt_in=True))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidNameError(
            f"unknown polic{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}: "
            f"use any of {', '.join(ordered_policies())}"
        )
    return ordered_policies(names)


@dataclass
class PolicyRun:
    """One policy over one episode: the daily account, rewards and metrics."""

    policy: str
    seed: int | None
    episode_key: str
    ticker: str
    dates: list[date]
    closes: np.ndarray
    sides: np.ndarray
    quantities: np.ndarray
    values: np.ndarray
    """V_0 (starting cash) then the value after each day's close: T + 1 entries."""
    rewards: np.ndarray
    traded: np.ndarray
    """Signed shares executed each day (0 for hold or an invalid action)."""
    invalid: np.ndarray
    method: str
    notes: list[str] = field(default_factory=list)
    scores: tuple[dict[str, Any], float | None] | None = field(default=None, repr=False)
    """(metrics, timing share) once scored: ``score_runs`` fills many runs in one array pass."""

    @property
    def metrics(self) -> dict[str, Any]:
        """Every metric of ``METRIC_NAMES`` (``score_runs``, for this run alone if not yet)."""
        if self.scores is None:
            score_runs([self])
        return self.scores[0]  # type: ignore[index]

    @property
    def timing_share(self) -> float | None:
        """Share of the timing test's shuffles this run's exposures beat (``stats.timing_test``)."""
        if self.scores is None:
            score_runs([self])
        return self.scores[1]  # type: ignore[index]

    @property
    def positions(self) -> np.ndarray:
        """Shares held after each day's trade."""
        return np.cumsum(self.traded)

    @property
    def upper_bound(self) -> bool:
        return is_upper_bound(self.policy)

    def row(self) -> dict[str, Any]:
        """The backtest row: policy, label, every metric, invalid steps, timing share, notes."""
        return {
            "policy": self.policy,
            "label": policy_label(self.policy),
            "upper_bound": self.upper_bound,
            "episode": self.episode_key,
            "start": self.dates[0].isoformat(),
            "end": self.dates[-1].isoformat(),
            "trading_days": len(self.dates),
            **{name: self.metrics[name] for name in METRIC_NAMES},
            "invalid_steps": int(self.invalid.sum()),
            "timing_share": self.timing_share,
            "method": self.method,
            "seed": self.seed,
            "notes": "; ".join(self.notes),
        }


@dataclass
class Backtest:
    """Every requested policy on one episode; ``failures`` maps a policy to its error."""

    episode: Episode
    runs: list[PolicyRun]
    failures: dict[str, str] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        return [run.row() for run in self.runs]

    def run_of(self, policy: str) -> PolicyRun:
        return next(r for r in self.runs if r.policy == policy)


def score_runs(runs: Sequence[PolicyRun]) -> None:
    """Metrics and timing shares of every run not yet scored, in one array pass per episode
    length (and seed, for the timing test's shuffles): the same numbers as one run at a time."""
    by_days: dict[int, list[PolicyRun]] = {}
    for run in runs:
        if run.scores is None:
            by_days.setdefault(len(run.closes), []).append(run)
    for same in by_days.values():
        values = np.stack([r.values for r in same])
        closes = np.stack([r.closes for r in same])
        positions = np.stack([r.positions for r in same])
        traded = np.stack([r.traded for r in same])
        metrics = curve_metrics_many(values, closes, positions, traded, [r.rewards.sum() for r in same])
        exposure = positions * closes / values[:, 1:]
        shares: list[float | None] = [None] * len(same)
        by_seed: dict[int, list[int]] = {}
        for i, run in enumerate(same):
            by_seed.setdefault(0 if run.seed is None else run.seed, []).append(i)
        for seed, rows in by_seed.items():
            tests = timing_tests(exposure[rows], closes[rows], TIMING_SHUFFLES, seed)
            for i, test in zip(rows, tests, strict=True):
                shares[i] = test.share_beaten
        for run, metric, share in zip(same, metrics, shares, strict=True):
            run.scores = (metric, share)


def _executed(sides: np.ndarray, qty: np.ndarray, invalid: np.ndarray) -> np.ndarray:
    signed = np.where(sides == int(Side.BUY), qty, np.where(sides == int(Side.SELL), -qty, 0.0))
    return np.where(invalid, 0.0, signed)


def _vectorised_runs(
    episodes: Sequence[Episode],
    names: Sequence[str],
    params: Sequence[RewardParams],
    seeds: Sequence[int | None],
    settings: Settings | None,
) -> list[dict[str, PolicyRun]]:
    """Every planned policy on every episode: plans made per episode, then graded in one
    replay-grader pass per episode length (each row on its own episode's closes)."""
    out: list[dict[str, PolicyRun]] = [{} for _ in episodes]
    if not names:
        return out
    by_days: dict[int, list[tuple[int, str, Plan]]] = {}
    for i, episode in enumerate(episodes):
        for name in names:
            plan = plan_for(name, episode, params[i], settings)
            by_days.setdefault(episode.trading_days, []).append((i, name, plan))  # type: ignore[arg-type]
    for same in by_days.values():
        graded = grade_batch(
            np.stack([plan.sides for _, _, plan in same]),
            np.stack([plan.quantities for _, _, plan in same]),
            np.stack([episodes[i].closes for i, _, _ in same]),
            [params[i] for i, _, _ in same],
        )
        for row, (i, name, plan) in enumerate(same):
            episode = episodes[i]
            out[i][name] = PolicyRun(
                policy=name,
                seed=seeds[i],
                episode_key=episode.key,
                ticker=episode.ticker,
                dates=[d.date() for d in episode.dates],
                closes=episode.closes,
                sides=plan.sides,
                quantities=plan.quantities,
                values=np.concatenate([[params[i].starting_cash], graded.values[row]]),
                rewards=graded.rewards[row],
                traded=_executed(plan.sides, plan.quantities, graded.invalid[row]),
                invalid=graded.invalid[row],
                method="vectorised",
                notes=list(plan.notes),
            )
    return out


def played_run(env: TradingEnv, name: str, seed: int | None, method: str) -> PolicyRun:
    """The run an environment just played to its end: the account replayed through the
    grader (the environment's own arithmetic, vectorised) and every metric."""
    sides = np.array([s for s, _ in env.actions], dtype=np.int64)
    qty = np.array([q for _, q in env.actions], dtype=np.float64)
    params = env.params
    values, invalid, traded = simulate_accounts(
        sides[None, :],
        qty[None, :],
        env.closes,
        np.array([params.transaction_cost]),
        np.array([params.starting_cash]),
    )
    episode = env.episode
    return PolicyRun(
        policy=name,
        seed=seed,
        episode_key=episode.key,
        ticker=episode.ticker,
        dates=[d.date() for d in episode.dates],
        closes=episode.closes,
        sides=sides,
        quantities=qty,
        values=np.concatenate([[params.starting_cash], values[0]]),
        rewards=np.asarray(env.rewards, dtype=np.float64),
        traded=traded[0],
        invalid=invalid[0],
        method=method,
    )


def play(env: TradingEnv, policy: Policy, name: str, seed: int | None, method: str) -> PolicyRun:
    """Play ``policy`` through the environment, one step per day, and record the run."""
    observation = env.reset()
    while not env.done:
        observation = env.step(policy.act(observation)).observation
    return played_run(env, name, seed, method)


def play_lockstep(
    envs: Sequence[TradingEnv],
    decide: BatchDecider,
    name: str,
    seed: int | None | Sequence[int | None] = None,
    method: str = "batched",
) -> list[PolicyRun]:
    """Play every environment at once, step t of all of them decided in one batch (a model's
    forward pass serves every episode), and record each run as ``play`` does (``seed``: one
    for all, or one per environment)."""
    seeds = list(seed) if isinstance(seed, Sequence) else [seed] * len(envs)
    observations = [env.reset() for env in envs]
    while True:
        live = [i for i, env in enumerate(envs) if not env.done]
        if not live:
            break
        actions = decide(live, [observations[i] for i in live])
        for i, action in zip(live, actions, strict=True):
            observations[i] = envs[i].step(action).observation
    runs = [played_run(env, name, s, method) for env, s in zip(envs, seeds, strict=True)]
    score_runs(runs)
    return runs


def _per_step_run(
    env: TradingEnv, name: str, seed: int | None, settings: Settings | None, book: VoteBook | None
) -> PolicyRun:
    if name == "council" and book is not None and settings is not None and book.covers(env.episode.dates):
        run = play(env, cached_council(book, settings), name, seed, "cached_votes")
        run.notes.append(f"votes from the cache ({book.version})")
        return run
    return play(env, make_policy(name, env, seed, settings), name, seed, "per_step")


def _failure(exc: Exception) -> str:
    return str(exc) if isinstance(exc, StockerError) else f"{type(exc).__name__}: {exc}"


def backtest_many(
    episodes: Sequence[Episode],
    policies: Sequence[str] | None = None,
    params: RewardParams | None = None,
    seeds: Sequence[int | None] | int | None = 0,
    settings: Settings | None = None,
    vote_books: Mapping[str, VoteBook] | None = None,
    vectorised: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> list[Backtest]:
    """Play every policy in ``policies`` (default: the whole registry) on every episode
    (of any tickers).

    ``seeds``: one per episode, or one for all; ``settings``: the run's, handed to every
    policy (those that read stored data or a trained model fail without them, reported in
    ``failures``); ``vote_books``: the council's cached votes by ticker. A policy with a batch
    decider plays all episodes in lockstep (one model call per step for the lot); the others
    play each episode on its own. A policy that fails (e.g. a trained agent without a model
    file) is reported in ``failures`` and the others still run; an unknown name raises
    InvalidNameError. ``vectorised=False`` plays every policy step by step, one episode
    at a time (the reference loop). ``progress(done, total)`` counts policies.
    """
    names = check_policy_names(policies) if policies else ordered_policies()
    episodes = list(episodes)
    if not episodes:
        return []
    every = seeds if isinstance(seeds, Sequence) else [seeds] * len(episodes)
    if len(every) != len(episodes):
        raise ValueError(f"{len(every)} seeds for {len(episodes)} episodes")
    plans = [params or RewardParams(starting_cash=e.starting_cash) for e in episodes]
    fast = [n for n in names if vectorised and has_plan(n)]
    runs = _vectorised_runs(episodes, fast, plans, every, settings)
    failures: list[dict[str, str]] = [{} for _ in episodes]
    envs = [TradingEnv(e, p) for e, p in zip(episodes, plans, strict=True)]
    slow = [n for n in names if n not in fast]
    for done, name in enumerate(slow, start=1):
        try:
            decide = make_batch_decider(name, envs, every, settings) if vectorised else None
        except Exception as exc:  # a model that cannot load fails every episode alike
            for failed in failures:
                failed[name] = _failure(exc)
            decide = None
        else:
            if decide is not None:
                played = _lockstep_runs(envs, decide, name, every, failures)
                for mine, run in zip(runs, played, strict=True):
                    if run is not None:
                        mine[name] = run
            else:
                for i, env in enumerate(envs):
                    try:
                        book = (vote_books or {}).get(env.episode.ticker)
                        runs[i][name] = _per_step_run(env, name, every[i], settings, book)
                    except Exception as exc:  # a third-party policy must not sink the others
                        failures[i][name] = _failure(exc)
        if progress:
            progress(done, len(slow))
    results = [
        Backtest(e, [mine[n] for n in names if n in mine], failed)
        for e, mine, failed in zip(episodes, runs, failures, strict=True)
    ]
    score_runs([run for result in results for run in result.runs])
    return results


def _lockstep_runs(
    envs: Sequence[TradingEnv],
    decide: BatchDecider,
    name: str,
    seeds: Sequence[int | None],
    failures: list[dict[str, str]],
) -> list[PolicyRun | None]:
    try:
        return list(play_lockstep(envs, decide, name, seeds, "batched"))
    except Exception as exc:
        for failed in failures:
            failed[name] = _failure(exc)
        return [None] * len(envs)


def backtest(
    episode: Episode,
    policies: Sequence[str] | None = None,
    params: RewardParams | None = None,
    seed: int | None = 0,
    settings: Settings | None = None,
    vote_book: VoteBook | None = None,
    vectorised: bool = True,
) -> Backtest:
    """Play every policy in ``policies`` (default: the whole registry) on ``episode``
    (``backtest_many`` of one episode)."""
    books = {episode.ticker: vote_book} if vote_book is not None else None
    return backtest_many([episode], policies, params, [seed], settings, books, vectorised)[0]
