"""Backtests at universe size, both comparisons in this run, on the valid split (not the test
split: a bench is no test look) of a home where the main job ran.

1. Model policies: every episode in lockstep (``backtest_many``: step t of all of them in one
   model call) against one episode at a time (the per-step reference loop), on one ticker's
   rolling windows. The runs are checked identical.
2. ``--stage``: the partition backtests of every policy (each ticker's partition episodes
   inside its valid split, every episode of a ticker in one ``backtest_many`` call, as the
   ``backtests`` asset plays them, without the writes) with this code against the code of
   ``--before`` (a git ref, run from an extracted copy in a child process): seconds per
   ticker-month each, their ratio, and whether every row, equity curve and reward is equal.

Run: STOCKER_HOME=... python bench/bench_batched_backtests.py [--ticker GOOGL]
     [--policies moderator_base,moderator_sft,moderator_grpo,a2c,ppo]
     STOCKER_HOME=... python bench/bench_batched_backtests.py --stage [--before REF] [--tickers N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd

from stocker_core.composition import register_all
from stocker_core.config import get_settings
from stocker_core.env.episode import episode_from_bars, window_bounds
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation import steps
from stocker_core.evaluation.backtests import backtest_many, ordered_policies
from stocker_core.evaluation.council_votes import load_vote_book
from stocker_core.evaluation.rolling import window_episodes
from stocker_core.evaluation.splits import load_splits
from stocker_core.market.bars import load_bars
from stocker_core.moderator import policy as moderator_policy
from stocker_core.warehouse.db import Warehouse

DEFAULT_POLICIES = "moderator_base,moderator_sft,moderator_grpo,a2c,ppo"
REPEATS = 3
BEFORE = "4493610"
"""The commit before the evaluation stages were vectorised (issue 49)."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ticker", default="GOOGL")
    parser.add_argument("--policies", default=DEFAULT_POLICIES)
    parser.add_argument("--stage", action="store_true", help="partition backtests: this code vs --before")
    parser.add_argument("--before", default=BEFORE, help="git ref of the code to compare with")
    parser.add_argument("--tickers", type=int, default=4, help="--stage: the first N tickers")
    parser.add_argument("--stage-policies", default="", help="--stage: these only (default: every one)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    chosen = [n for n in args.stage_policies.split(",") if n]
    if args.child:
        print(json.dumps(stage_figures(args.tickers, chosen)))
    elif args.stage:
        compare_stage(args.before, args.tickers, chosen)
    else:
        compare_lockstep(args.ticker, args.policies)


def compare_lockstep(ticker: str, policies: str) -> None:
    """Part 1: model policies in lockstep against one episode at a time."""
    settings = get_settings()
    register_all()
    warehouse = Warehouse(settings.warehouse_path)
    valid = load_splits(warehouse).range_of(ticker, "valid")
    bars, _ = load_bars(settings, ticker, None, valid.end + pd.Timedelta(days=1), warehouse)
    params = RewardParams.from_settings(settings)
    episodes = window_episodes(bars, valid, params.starting_cash)
    names = policies.split(",")
    seeds = list(range(len(episodes)))
    backtest_many(episodes[:1], names, params, seeds[:1], settings)  # warm-up: model loads, imports

    def timed(vectorised: bool) -> tuple[float, list]:
        moderator_policy._DECIDERS.clear()  # no answers remembered from the other path
        started = time.perf_counter()
        results = backtest_many(episodes, names, params, seeds, settings, vectorised=vectorised)
        return time.perf_counter() - started, results

    alone_s, alone = timed(False)
    batched_s, batched = timed(True)
    for a, b in zip(batched, alone, strict=True):
        assert not a.failures, a.failures
        for x, y in zip(a.runs, b.runs, strict=True):
            assert x.policy == y.policy and np.array_equal(x.traded, y.traded), x.policy
    steps = sum(len(e.dates) for e in episodes)
    print(f"{ticker}: {len(episodes)} valid-split windows, {steps} steps, policies {', '.join(names)}")
    print(f"one episode at a time: {alone_s:7.2f} s")
    print(f"all in lockstep:       {batched_s:7.2f} s   ({alone_s / batched_s:.1f}x, identical runs)")


def stage_figures(tickers: int, policies: list[str]) -> dict[str, object]:
    """Part 2, in whichever code this process imports: every policy on the partition episodes
    inside the valid split of the first ``tickers`` tickers, grouped as that code's
    ``backtest_partitions`` groups them (whole tickers up to ``steps.BATCH_EPISODES`` episodes
    per ``backtest_many`` call; one ticker a call where the code has none), after a warm-up
    that loads the models; seconds, ticker-months and a digest of the rows."""
    settings = get_settings()
    register_all()
    warehouse = Warehouse(settings.warehouse_path)
    splits = load_splits(warehouse)
    params = RewardParams.from_settings(settings)
    names = ordered_policies(policies or None)
    work = []
    for ticker in splits.tickers[:tickers]:
        valid = splits.range_of(ticker, "valid")
        bars, origin = load_bars(settings, ticker, None, valid.end + pd.Timedelta(days=1), warehouse)
        months = pd.date_range(pd.Timestamp(valid.start).to_period("M").to_timestamp(), valid.end, freq="MS")
        keys = [
            f"{ticker}|{m.date().isoformat()}"
            for m in months
            if m.date() >= valid.start and window_bounds(m.date(), settings.episode_months)[1] <= valid.end
        ]
        episodes = [episode_from_bars(key, bars, settings, origin) for key in keys]
        book = load_vote_book(warehouse, settings, ticker, bars["date"].tolist())
        work.append((episodes, {ticker: book}))
    backtest_many(work[0][0][:1], names, params, 0, settings, work[0][1])  # warm-up: model loads
    _agents_decided_before(work, names, params, settings)
    work = _grouped(work, getattr(steps, "BATCH_EPISODES", 1))
    digest, months_played = hashlib.sha256(), 0
    seconds = float("inf")
    for _ in range(REPEATS):  # the best of a few: the box is shared
        _fresh_process()
        started = time.perf_counter()
        results = [backtest_many(episodes, names, params, 0, settings, books) for episodes, books in work]
        seconds = min(seconds, time.perf_counter() - started)
    failures = sorted({name for played in results for r in played for name in r.failures})
    for played in results:
        months_played += len(played)
    for result in sorted((r for played in results for r in played), key=lambda r: r.episode.key):
        for run in result.runs:
            digest.update(json.dumps(run.row(), sort_keys=True, default=str).encode())
            for array in (run.values, run.rewards, run.positions):
                digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return {
        "seconds": seconds,
        "ticker_months": months_played,
        "policies": len(names),
        "failures": failures,
        "digest": digest.hexdigest(),
    }


def _grouped(work: list, most: int) -> list:
    """Whole tickers' (episodes, books) merged into groups of up to ``most`` episodes."""
    groups: list = []
    for episodes, books in work:
        if groups and len(groups[-1][0]) + len(episodes) <= most:
            groups[-1] = (groups[-1][0] + episodes, {**groups[-1][1], **books})
        else:
            groups.append((list(episodes), dict(books)))
    return groups


def _agents_decided_before(work: list, names: list[str], params: RewardParams, settings: object) -> None:
    """As in the main job, where the rolling evaluation decided every (ticker, day) of the
    agents first: their decisions are kept on disk (this code's own store key), and the
    timed run starts with nothing in memory."""
    agents = [n for n in names if n.startswith("agent_")]
    for episodes, books in work:
        backtest_many(episodes, agents, params, 0, settings, books)
    _fresh_process()


def _fresh_process() -> None:
    """Nothing decided or read in memory, as in a fresh lane: the agents' traces and data, the
    moderators' answers, the oracle's headlines and scores (whichever this code keeps)."""
    from stocker_core.agent import policy as agent_policy
    from stocker_core.baselines import oracle

    agent_policy._TRACES.clear()
    agent_policy._cached_data.cache_clear()
    moderator_policy._DECIDERS.clear()
    for name in ("_stored_news", "_stored_ticker_news", "_cutoff", "_score"):
        if hasattr(oracle, name):
            getattr(oracle, name).cache_clear()


def _child(source: Path | None, tickers: int, policies: list[str]) -> dict[str, object]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = f"{source}{os.pathsep}{env.get('PYTHONPATH', '')}"
    command = [sys.executable, __file__, "--child", "--tickers", str(tickers)]
    out = subprocess.run(
        [*command, "--stage-policies", ",".join(policies)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare_stage(before: str, tickers: int, policies: list[str]) -> None:
    """Part 2: the partition backtests with this code and with ``before``'s, each in a fresh
    process (the old first, then this code), per ticker-month."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", before, "stocker_core"], check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryDirectory() as folder, tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
        old = _child(Path(folder), tickers, policies)
    new = _child(None, tickers, policies)
    months = int(new["ticker_months"])
    old_cost, new_cost = float(old["seconds"]) / months, float(new["seconds"]) / months
    same = "identical rows, curves and rewards" if old["digest"] == new["digest"] else "ROWS DIFFER"
    print(f"partition backtests, valid split: {months} ticker-months, {new['policies']} policies")
    print(f"  failures: before {old['failures'] or 'none'}, now {new['failures'] or 'none'}")
    print(f"  before ({before}): {old['seconds']:7.2f} s   {old_cost:.3f} s a ticker-month")
    print(f"  now:              {new['seconds']:7.2f} s   {new_cost:.3f} s a ticker-month")
    print(f"  ratio {old_cost / new_cost:.2f}x ({same})")
    print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
