"""Held-out evaluation of the agent policies: result score, action mix and backtest metrics
over a whole split (valid by default; test once, at the end), and the θ sensitivity table.

Every day of the split is decided (one batched loop per policy); decisions are scored
where the forward return stays inside the split, and played in the environment over the
split as one episode (BUY all in, SELL flat, HOLD keep) for ARR / Sharpe / MDD, with
bootstrap CIs over consecutive ``window``-day slices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stocker_core.agent.config import THETA_GRID, AgentConfig
from stocker_core.agent.data import AgentData
from stocker_core.agent.errors import NoForwardReturnError
from stocker_core.agent.loop import run_decisions
from stocker_core.agent.rewards import score_trace
from stocker_core.agent.scoring import summarise
from stocker_core.agent.tools import AgentTools
from stocker_core.agent.trace import Trace
from stocker_core.config import Settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation.splits import Splits

THETA_DEPENDENT = {"agent_scripted"}
"""Policies whose decisions change with θ (the scripted band); model decisions do not."""


class FixedDecisions:
    """Plays precomputed daily decisions (a policy for ``backtests.play``)."""

    def __init__(self, decisions: Sequence[str], cost: float) -> None:
        self.decisions, self.cost = list(decisions), cost

    def act(self, observation: Observation) -> Action:
        from stocker_core.agent.policy import decision_action

        return decision_action(self.decisions[observation.step], observation, self.cost)


@dataclass
class SplitRun:
    """One policy over one split: its traces (scored where labelled) and the played run."""

    policy: str
    theta: float
    traces: list[Trace]
    run: object


def split_episode(data: AgentData, splits: Splits, split: str, cash: float) -> Episode:
    """The whole ``split`` of ``data.ticker`` as one episode (key ``TICKER|<split>``)."""
    from stocker_core.evaluation.rolling import slice_episode, split_bounds

    span = splits.range_of(data.ticker, split)
    lo, hi = split_bounds(data.bars, span)
    return slice_episode(data.bars, lo, hi, data.ticker, f"{data.ticker}|{split}", cash)


def decide(writer: object, data: AgentData, episode: Episode, config: AgentConfig, name: str) -> list[Trace]:
    """Traces for every day of ``episode``, scored where the label day is inside it."""
    days = [pd.Timestamp(d) for d in episode.dates]
    traces = run_decisions(writer, [AgentTools(data, d) for d in days], config, name)  # type: ignore[arg-type]
    rescore(traces, data, episode, config)
    return traces


def rescore(traces: Sequence[Trace], data: AgentData, episode: Episode, config: AgentConfig) -> None:
    """(Re)score traces under ``config`` (θ, horizon); days whose label falls past the episode
    are left unscored."""
    last = pd.Timestamp(episode.dates[-1])
    for trace in traces:
        day = pd.Timestamp(trace.date)
        ahead = data.forward_day(day, config.horizon)
        trace.scores = None
        if ahead is None or ahead > last:
            continue
        try:
            score_trace(trace, data.forward_return(day, config.horizon), config)
        except NoForwardReturnError:
            continue


def play_split(episode: Episode, decisions: Sequence[str], name: str, params: RewardParams) -> object:
    """The decisions played through the environment (a ``backtests.PolicyRun``)."""
    from stocker_core.evaluation.backtests import play

    env = TradingEnv(episode, params)
    return play(env, FixedDecisions(decisions, params.transaction_cost), name, 0, "agent_decisions")


def window_metrics(run: object, window: int) -> pd.DataFrame:
    """ARR, Sharpe (daily) and MDD of consecutive ``window``-day slices of a run's equity."""
    from stocker_core.evaluation.metrics import annualised_return, daily_returns, max_drawdown, sharpe_daily

    values = np.asarray(run.values, dtype=np.float64)  # type: ignore[attr-defined]
    rows = []
    for lo in range(0, len(values) - 1 - window + 1, window):
        part = values[lo : lo + window + 1]
        rows.append(
            {
                "arr": annualised_return(part),
                "sharpe": sharpe_daily(daily_returns(part)),
                "mdd": max_drawdown(part),
            }
        )
    return pd.DataFrame(rows, columns=["arr", "sharpe", "mdd"])


def evaluate_split(
    policies: Sequence[str],
    settings: Settings,
    config: AgentConfig,
    split: str = "valid",
    thetas: Sequence[float] = (),
    tickers: Sequence[str] | None = None,
    window: int = 42,
) -> pd.DataFrame:
    """One row per (θ, policy, ticker): decisions, result / format / tool scores, action mix,
    ARR / Sharpe / MDD over the split, and bootstrap 95% CIs over ``window``-day slices."""
    from stocker_core.agent.pairs import agent_splits
    from stocker_core.agent.policy import agent_data, agent_writer
    from stocker_core.evaluation.stats import bootstrap_ci
    from stocker_core.warehouse.db import Warehouse

    thetas = tuple(thetas) or (config.theta,)
    data = {t: agent_data(t, settings) for t in (tickers or settings.default_tickers)}
    warehouse = Warehouse(settings.warehouse_path) if settings.warehouse_path.exists() else None
    splits = agent_splits(warehouse, data).splits
    params = RewardParams.from_settings(settings)
    rows = []
    for ticker, ticker_data in data.items():
        episode = split_episode(ticker_data, splits, split, settings.starting_cash)
        cached: dict[str, list[Trace]] = {}
        for theta in thetas:
            cfg = config.model_copy(
                update={"theta": theta, "result_mode": "band"}
            )  # the θ table reads hit rates
            for name in policies:
                if name in THETA_DEPENDENT or name not in cached:
                    cached[name] = decide(agent_writer(name, settings, cfg), ticker_data, episode, cfg, name)
                traces = cached[name]
                rescore(traces, ticker_data, episode, cfg)
                summary = summarise([t for t in traces if t.scores is not None])
                run = play_split(episode, [t.action for t in traces], name, params)
                slices = window_metrics(run, window)
                row = {"theta": theta, "policy": name, "ticker": ticker, "split": split}
                row.update({k: v for k, v in summary.as_dict().items() if k != "n"})
                row["scored"] = summary.n
                row["days"] = len(traces)
                for metric in ("arr", "sharpe", "mdd"):
                    ci = bootstrap_ci(slices[metric].to_numpy(dtype=float))
                    row[metric] = run.metrics[metric]  # type: ignore[attr-defined]
                    row[f"{metric}_ci"] = (ci.low, ci.high)
                row["trades"] = run.metrics["trades"]  # type: ignore[attr-defined]
                rows.append(row)
    return pd.DataFrame(rows)


def theta_table(
    policies: Sequence[str],
    settings: Settings,
    config: AgentConfig,
    thetas: Sequence[float] = THETA_GRID,
    split: str = "valid",
) -> pd.DataFrame:
    """The θ sensitivity table: per θ and policy, result score, action mix, MDD and ARR."""
    frame = evaluate_split(policies, settings, config, split, thetas)
    columns = [
        "theta",
        "policy",
        "ticker",
        "result",
        "share_buy",
        "share_sell",
        "share_hold",
        "arr",
        "mdd",
        "trades",
    ]
    return frame[columns]


def valid_window_records(
    writer: object,
    data: dict[str, AgentData],
    splits: Splits,
    config: AgentConfig,
    params: RewardParams,
    name: str = "agent_rl",
    window: int = 42,
) -> list[dict]:
    """The valid split cut into non-overlapping ``window``-day episodes per ticker, played by
    ``writer``'s decisions and by buy-and-hold, scored by ``evaluation.backtests``: one record per
    (policy, window), as the moderator's ``heldout_episodes``. A decision without an answer
    counts as unparsable (it holds)."""
    from stocker_core.env.policies import BuyAndHoldPolicy
    from stocker_core.evaluation.backtests import play
    from stocker_core.evaluation.rolling import slice_episode, split_bounds
    from stocker_core.moderator.heldout import episode_records

    episodes, tools = [], []
    for ticker, ticker_data in sorted(data.items()):
        lo, hi = split_bounds(ticker_data.bars, splits.range_of(ticker, "valid"))
        for start in range(lo, hi - window + 1, window):
            key = f"{ticker}|valid@{start - lo}"
            episode = slice_episode(
                ticker_data.bars, start, start + window, ticker, key, params.starting_cash
            )
            episodes.append(episode)
            tools += [AgentTools(ticker_data, pd.Timestamp(d)) for d in episode.dates]
    # every decision of every window in one batched loop (the writer batches its model calls)
    traces = run_decisions(writer, tools, config, name)  # type: ignore[arg-type]
    records: list[dict] = []
    offset = 0
    for episode in episodes:
        mine, offset = traces[offset : offset + len(episode.dates)], offset + len(episode.dates)
        unanswered = sum(t.decision is None for t in mine)
        run = play_split(episode, [t.action for t in mine], name, params)
        records += episode_records([run], [unanswered])  # type: ignore[list-item]
        bh = play(
            TradingEnv(episode, params),
            BuyAndHoldPolicy(params.transaction_cost),
            "buy_and_hold",
            None,
            "per_step",
        )
        records += episode_records([bh])
    return records
