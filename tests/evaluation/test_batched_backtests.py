"""Backtests of many episodes at once equal the one-episode paths: the planned policies graded
in one pass (episodes of several lengths and tickers) against each episode graded alone with
every run scored alone (the path before batching: exact), every policy against the per-step
reference loop (the environment's own arithmetic: to 1e-9, as the grader promises), and the
partitions of many tickers played together against each ticker's alone (exact)."""

import numpy as np
import pandas as pd
import pytest
from evaluation_testing import episode_with_history, random_walk, store_prices, synthetic_prices

from stocker_core.config import Settings
from stocker_core.env.actions import Side
from stocker_core.env.grader import grade_batch
from stocker_core.env.policies import has_plan, plan_for, policy_names
from stocker_core.env.rewards import RewardParams
from stocker_core.evaluation import steps
from stocker_core.evaluation.backtests import backtest, backtest_many
from stocker_core.evaluation.metrics import curve_metrics
from stocker_core.evaluation.stats import timing_test
from stocker_core.evaluation.store import equity_frame
from stocker_core.warehouse.db import Warehouse

LENGTHS = (1, 2, 30, 41, 41, 43, 63)


@pytest.fixture
def sample():
    """Seven episodes of five lengths (one a single day) on three tickers, with history."""
    return [
        episode_with_history(random_walk(60 + days, seed), 60, key=f"T{seed % 3}|2020-0{1 + seed % 9}-01")
        for seed, days in enumerate(LENGTHS)
    ]


def _alone(episode, name, params, settings, seed):
    """The path before batching: one episode's plan graded on its own closes, scored alone."""
    plan = plan_for(name, episode, params, settings)
    graded = grade_batch(plan.sides[None], plan.quantities[None], episode.closes, params)
    values = np.concatenate([[params.starting_cash], graded.values[0]])
    signed = np.select([plan.sides == Side.BUY, plan.sides == Side.SELL], [plan.quantities, -plan.quantities])
    traded = np.where(graded.invalid[0], 0.0, signed)
    positions = np.cumsum(traded)
    metrics = curve_metrics(values, episode.closes, positions, traded, graded.rewards[0].sum())
    share = timing_test(positions * episode.closes / values[1:], episode.closes, 1000, seed).share_beaten
    return values, graded.rewards[0], positions, metrics, share


def test_planned_policies_of_many_episodes_equal_each_episode_alone(sample, tmp_path):
    settings = Settings(home=tmp_path / "home")  # the oracle reads its headlines with them
    names = [n for n in policy_names() if has_plan(n)]
    seeds = list(range(len(sample)))
    batched = backtest_many(sample, names, seeds=seeds, settings=settings)
    for episode, result, seed in zip(sample, batched, seeds, strict=True):
        params = RewardParams(starting_cash=episode.starting_cash)
        for name in names:
            run = result.run_of(name)
            values, rewards, positions, metrics, share = _alone(episode, name, params, settings, seed)
            assert np.array_equal(run.values, values), (episode.key, name)
            assert np.array_equal(run.rewards, rewards), (episode.key, name)
            assert np.array_equal(run.positions, positions), (episode.key, name)
            assert run.metrics == metrics and run.timing_share == share, (episode.key, name)


def test_every_policy_of_a_batch_equals_the_per_step_loop(sample, tmp_path):
    settings = Settings(home=tmp_path / "home")
    names = [n for n in policy_names() if has_plan(n)] + ["random"]
    seeds = list(range(len(sample)))
    batched = backtest_many(sample, names, seeds=seeds, settings=settings)
    for episode, result, seed in zip(sample, batched, seeds, strict=True):
        slow = backtest(episode, names, seed=seed, settings=settings, vectorised=False)
        for name in names:
            a, b = result.run_of(name), slow.run_of(name)
            assert np.array_equal(a.sides, b.sides) and np.array_equal(a.quantities, b.quantities), name
            assert np.array_equal(a.values, b.values) and np.array_equal(a.positions, b.positions), name
            np.testing.assert_allclose(a.rewards, b.rewards, rtol=0, atol=1e-9)
            assert a.row() == pytest.approx(b.row() | {"method": a.method}, abs=1e-9), name


def test_a_run_is_scored_the_same_in_a_batch_and_alone(sample):
    batched = backtest_many(sample, ["random", "buy_and_hold"], seeds=list(range(len(sample))))
    for result in batched:
        for run in result.runs:
            alone = curve_metrics(run.values, run.closes, run.positions, run.traded, run.rewards.sum())
            exposure = run.positions * run.closes / run.values[1:]
            assert run.metrics == alone
            assert run.timing_share == timing_test(exposure, run.closes, 1000, run.seed).share_beaten


def test_batched_metrics_equal_empyrical_on_one_curve_at_a_time(sample):
    """The numbers ``curve_metrics`` gave before it became a batch of one: empyrical on 1-D returns."""
    import empyrical

    batched = backtest_many(sample, ["random", "zmr", "buy_and_hold"], seeds=3)
    for run in (r for result in batched for r in result.runs if len(r.closes) > 2):
        returns = run.values[1:] / run.values[:-1] - 1.0
        m = run.metrics
        assert m["arr"] == float(empyrical.annual_return(returns, annualization=252))
        assert m["volatility"] == float(empyrical.annual_volatility(returns, annualization=252))
        if np.std(returns) != 0.0:
            assert m["sharpe"] == float(empyrical.sharpe_ratio(returns, annualization=1))
        if np.any(returns < 0):
            assert m["sortino"] == float(empyrical.sortino_ratio(returns, annualization=1))
        assert m["turnover"] == float(np.abs(run.traded * run.closes).sum() / run.values[0])


def test_partitions_of_many_tickers_play_together_with_the_rows_of_each_alone(tmp_path, monkeypatch):
    """``backtest_partitions`` plays several tickers' episodes in one batch (here two batches of
    whole tickers): every ticker's rows as when its partitions are played alone."""
    settings = Settings(home=tmp_path / "home")
    warehouse = Warehouse(settings.warehouse_path)
    tickers = ["AAA", "BBB", "CCC"]
    store_prices(warehouse, pd.concat([synthetic_prices(t, 400, seed) for seed, t in enumerate(tickers)]))
    steps.compute_and_store_splits(warehouse)
    keys = [f"{t}|{m}" for t in tickers for m in ("2015-03-01", "2016-02-01", "2016-05-01")]
    names = ["buy_and_hold", "random", "macd", "ideal"]
    monkeypatch.setattr(steps, "BATCH_EPISODES", 5)  # AAA and BBB together, then CCC
    seen: list[tuple[int, int]] = []
    together = steps.backtest_partitions(
        settings, warehouse, keys, names, progress=lambda d, n: seen.append((d, n))
    )
    assert seen[-1] == (9, 9) and (6, 9) in seen
    for done in together:
        (alone,) = steps.backtest_partitions(
            settings, warehouse, [k for k in keys if k.startswith(done.ticker)], names
        )
        mine = done.content_rows()
        assert sorted(mine) == sorted(alone.content_rows())
        for key, rows in alone.content_rows().items():
            assert (
                rows.astype(str).reset_index(drop=True).equals(mine[key].astype(str).reset_index(drop=True))
            )


def test_equity_rows_of_many_runs_are_each_run_s_rows_in_one_frame(sample):
    """``eval.equity_curves`` rows built in one frame equal the frames built run by run."""
    runs = [
        run for result in backtest_many(sample, ["buy_and_hold", "random"], seeds=1) for run in result.runs
    ]
    one_by_one = []
    for run in runs:
        peak = np.maximum.accumulate(run.values)
        one_by_one.append(
            pd.DataFrame(
                {
                    "key": run.episode_key,
                    "ticker": run.ticker,
                    "policy": run.policy,
                    "step": np.arange(len(run.values), dtype=np.int32),
                    "date": [None, *run.dates],
                    "close": [None, *run.closes.tolist()],
                    "value": run.values,
                    "position": np.concatenate([[0.0], run.positions]),
                    "traded": np.concatenate([[0.0], run.traded]),
                    "drawdown": (peak - run.values) / peak,
                }
            )
        )
    expected = pd.concat(one_by_one, ignore_index=True)
    pd.testing.assert_frame_equal(equity_frame(runs), expected, check_exact=True)
