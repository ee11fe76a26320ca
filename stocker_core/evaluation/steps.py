"""The evaluation steps the Dagster assets and the CLI call: backtest partitions, compute
splits, run the rolling evaluation; each reads the warehouse once per ticker and writes
its ``eval.*`` rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

import duckdb
import pandas as pd

from stocker_core.config import Settings
from stocker_core.env.episode import Episode, episode_from_bars, window_bounds
from stocker_core.env.policies import is_fitted_on_train
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import EmptyDataError, StockerError
from stocker_core.evaluation.backtests import Backtest, backtest_many, ordered_policies
from stocker_core.evaluation.council_votes import VoteBook, load_vote_book
from stocker_core.evaluation.looks import look_settings, model_versions, record_if_test, record_test_look
from stocker_core.evaluation.rolling import (
    RollingConfig,
    rolling_rows,
    runs_of,
    split_bounds,
    summarise,
    test_period_episode,
    window_episodes,
    window_starts,
)
from stocker_core.evaluation.splits import (
    SplitConfig,
    SplitRange,
    Splits,
    load_splits,
    save_splits,
    splits_from_prices,
)
from stocker_core.evaluation.store import (
    backtest_frames,
    replace_rows,
    write_backtest_frames,
    write_backtests,
)
from stocker_core.market.bars import load_bars
from stocker_core.market.validation import parse_partition_key, partition_key
from stocker_core.warehouse.db import Warehouse

Log = Callable[[str], None]


@dataclass
class TickerBacktests:
    """The backtests of one ticker's partitions, and what identifies the votes used."""

    ticker: str
    results: dict[str, Backtest] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    vote_version: str | None = None
    in_sample: list[str] = field(default_factory=list)
    """Keys of train-split episodes, where the policies fitted on train were not played."""
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The ``eval.backtests`` rows written (``store.backtest_frames``), episode by episode."""

    def content_rows(self) -> dict[str, pd.DataFrame]:
        """The written rows per episode key without what names the write (month, vote set, run
        id, time), as ``backtest_frames(result.runs, "episode")`` gives them: what the asset's
        data versions hash."""
        if self.rows.empty:
            return {}
        content = self.rows.assign(month=None, vote_version=None, run_id=None).drop(columns=["created_at"])
        return {str(key): part for key, part in content.groupby("key", sort=False)}


def _vote_book(warehouse: Warehouse, settings: Settings, ticker: str, days: Sequence) -> VoteBook | None:
    try:
        return load_vote_book(warehouse, settings, ticker, days)
    except duckdb.Error:  # no council tables yet: the council policy computes its own votes
        return None


BATCH_EPISODES = 512
"""Most partition episodes played in one ``backtest_many`` call: a run that covers many tickers
plays them together (a model policy's step t of all of them in one forward pass) in groups of
whole tickers this large, so that memory stays bounded."""


@dataclass
class _Progress:
    """Partitions done out of ``total``, told to ``report`` (if any) as batches play."""

    report: Callable[[int, int], None] | None
    total: int
    done: int = 0

    def within(self, months: int) -> Callable[[int, int], None] | None:
        """A ``backtest_many`` progress callback for a batch of ``months`` partitions."""
        if self.report is None:
            return None
        report, base, total = self.report, self.done, self.total
        return lambda k, n: report(base + months * k // n, total)

    def advance(self, months: int) -> None:
        self.done += months
        if self.report:
            self.report(self.done, self.total)


@dataclass
class _TickerPlan:
    """One ticker's episodes to play: out of sample (every policy) and in sample (those not
    fitted on the train split)."""

    done: TickerBacktests
    months: int
    outside: list[Episode]
    inside: list[Episode]
    book: VoteBook | None


def backtest_partitions(
    settings: Settings,
    warehouse: Warehouse,
    keys: Sequence[str],
    policies: Sequence[str] | None = None,
    seed: int = 0,
    run_id: str | None = None,
    who: str = "cli",
    progress: Callable[[int, int], None] | None = None,
) -> list[TickerBacktests]:
    """Every policy on the episode of every partition key, except that the policies fitted on
    the train split (``env.policies.FITTED_ON_TRAIN``) are not played on episodes with a
    day in their ticker's train split (``TickerBacktests.in_sample``); the episodes of many
    tickers are played together (``BATCH_EPISODES`` at most), rows written per ticker;
    ``progress(done, total)`` counts partitions as each policy finishes a batch's episodes
    (the model policies play them in lockstep). Episodes with days in a test split are
    recorded as a look in ``eval.test_looks``."""
    try:
        splits: Splits | None = load_splits(warehouse)
    except (StockerError, duckdb.Error):  # no splits yet: every episode counts as out of sample
        splits = None
    grouped: dict[str, list[date]] = {}
    for key in keys:
        ticker, month = parse_partition_key(key)
        grouped.setdefault(ticker, []).append(month)
    params = RewardParams.from_settings(settings)
    names = ordered_policies(policies)
    out: list[TickerBacktests] = []
    batch: list[_TickerPlan] = []
    counted = _Progress(progress, len(keys))
    for i, (ticker, months) in enumerate(grouped.items()):
        batch.append(_ticker_plan(settings, warehouse, ticker, sorted(months), splits))
        full = sum(len(p.outside) + len(p.inside) for p in batch) >= BATCH_EPISODES
        if full or i == len(grouped) - 1:
            out += _play_batch(warehouse, batch, names, params, seed, settings, run_id, counted)
            batch = []
    _record_partition_look(warehouse, out, names, seed, settings, who, run_id)
    return out


def _ticker_plan(
    settings: Settings, warehouse: Warehouse, ticker: str, months: list[date], splits: Splits | None
) -> _TickerPlan:
    """Read one ticker's bars and votes once and cut the episodes of its ``months``."""
    end = window_bounds(months[-1], settings.episode_months)[1]
    bars, origin = load_bars(settings, ticker, None, end, warehouse)
    first = pd.Timestamp(months[0])
    book = _vote_book(warehouse, settings, ticker, bars.loc[bars["date"] >= first, "date"].tolist())
    done = TickerBacktests(ticker, vote_version=book.version if book else None)
    episodes = []
    for month in months:
        key = partition_key(ticker, month)
        try:
            episodes.append(episode_from_bars(key, bars, settings, origin))
        except EmptyDataError:
            done.empty.append(key)
    train = _train_range(splits, ticker)
    trained_on = [train is not None and train.overlaps(e.start, e.end) for e in episodes]
    inside = [e for e, hit in zip(episodes, trained_on, strict=True) if hit]
    done.in_sample = [e.key for e in inside]
    outside = [e for e, hit in zip(episodes, trained_on, strict=True) if not hit]
    return _TickerPlan(done, len(months), outside, inside, book)


def _play_batch(
    warehouse: Warehouse,
    batch: Sequence[_TickerPlan],
    names: Sequence[str],
    params: RewardParams,
    seed: int,
    settings: Settings,
    run_id: str | None,
    progress: _Progress,
) -> list[TickerBacktests]:
    """Every policy on the batch's out-of-sample episodes in one ``backtest_many`` call, the
    policies not fitted on train on its in-sample ones in another; rows written per ticker."""
    books = {p.done.ticker: p.book for p in batch if p.book is not None} or None
    outside = [e for p in batch for e in p.outside]
    inside = [e for p in batch for e in p.inside]
    months = sum(p.months for p in batch)
    played = backtest_many(outside, names, params, seed, settings, books, progress=progress.within(months))
    out_of_sample = [n for n in names if not is_fitted_on_train(n)]
    if inside and out_of_sample:
        played += backtest_many(inside, out_of_sample, params, seed, settings, books)
    by_ticker: dict[str, list[Backtest]] = {}
    for result in played:
        by_ticker.setdefault(result.episode.ticker, []).append(result)
    for plan in batch:
        done = plan.done
        for result in sorted(by_ticker.get(done.ticker, []), key=lambda r: r.episode.key):
            done.results[result.episode.key] = result
            done.failures.update(result.failures)
        runs = runs_of(list(done.results.values()))
        month_of = {key: parse_partition_key(key)[1] for key in done.results}
        if runs:
            done.rows, equity = backtest_frames(runs, "episode", month_of, done.vote_version, run_id)
            write_backtest_frames(warehouse, done.rows, equity)
    progress.advance(months)
    return [plan.done for plan in batch]


def _train_range(splits: Splits | None, ticker: str) -> SplitRange | None:
    if splits is None or ticker not in splits.tickers:
        return None
    return splits.range_of(ticker, "train")


def _record_partition_look(
    warehouse: Warehouse,
    done: Sequence[TickerBacktests],
    names: Sequence[str],
    seed: int,
    settings: Settings,
    who: str,
    run_id: str | None,
) -> None:
    days = {t.ticker: [d for result in t.results.values() for d in result.episode.dates] for t in done}
    played = sorted({r.policy for t in done for result in t.results.values() for r in result.runs})
    config = look_settings(seed, RewardParams.from_settings(settings))
    record_if_test(warehouse, who, "backtests", days, played, [t.vote_version for t in done], config, run_id)


def foreseen_left_out(
    prices: pd.DataFrame, tickers: Sequence[str], config: RollingConfig | None = None
) -> dict[str, str]:
    """Which of ``tickers`` the rolling evaluation will leave out, and why, from their stored
    days (``ticker, date``): too short to split, or a test split shorter than one window."""
    config = config or RollingConfig()
    mine = prices[prices["ticker"].isin(list(tickers))]
    out: dict[str, str] = {t: "no stored prices" for t in tickers if t not in set(mine["ticker"])}
    if mine.empty:
        return out
    try:
        splits = splits_from_prices(mine, tickers=list(tickers))
    except StockerError as exc:
        return {**out, **{t: str(exc) for t in tickers if t not in out}}
    out.update(dict(splits.skipped))
    for ticker in splits.tickers:
        test = splits.range_of(ticker, "test")
        if not window_starts(test.trading_days, config.window_days, config.step_days):
            out[ticker] = (
                f"its test split {test.start} … {test.end} holds {test.trading_days} trading days, "
                f"fewer than one {config.window_days}-day window"
            )
    return out


def compute_and_store_splits(
    warehouse: Warehouse, config: SplitConfig | None = None, tickers: Sequence[str] | None = None
) -> Splits:
    """Splits of every ticker with stored prices (or of ``tickers``), written to ``eval.splits``."""
    prices = warehouse.query("SELECT ticker, date FROM market.prices ORDER BY ticker, date")
    splits = splits_from_prices(prices, config, tickers)
    save_splits(warehouse, splits, config)
    return splits


class NoWindowsError(EmptyDataError):
    """Every ticker was left out of the rolling evaluation; ``left_out`` says why for each."""

    def __init__(self, message: str, left_out: dict[str, str]) -> None:
        super().__init__(message)
        self.left_out = left_out


@dataclass
class RollingOutcome:
    """What the rolling evaluation wrote."""

    rows: pd.DataFrame
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    failures: dict[str, str]
    vote_versions: dict[str, str]
    windows: int
    left_out: dict[str, str] = field(default_factory=dict)
    """Tickers too short for one window (or without stored test bars), with why."""


@dataclass
class _WindowPlan:
    """One ticker to play: its test split, its bars and how many windows it holds."""

    ticker: str
    test: SplitRange
    bars: pd.DataFrame
    windows: int


def _window_plans(
    settings: Settings,
    warehouse: Warehouse,
    splits: Splits,
    tickers: Sequence[str],
    config: RollingConfig,
) -> tuple[list[_WindowPlan], dict[str, str]]:
    """The tickers whose test split holds at least one window, and the others with why."""
    plans, left_out = [], {}
    for ticker in tickers:
        test = splits.range_of(ticker, "test")
        bars, _ = load_bars(settings, ticker, None, test.end + pd.Timedelta(days=1), warehouse)
        try:
            lo, hi = split_bounds(bars, test)
        except EmptyDataError as exc:
            left_out[ticker] = str(exc)
            continue
        count = len(window_starts(hi - lo, config.window_days, config.step_days))
        if not count:
            left_out[ticker] = (
                f"its test split {test.start} … {test.end} holds {hi - lo} trading days, "
                f"fewer than one {config.window_days}-day window"
            )
            continue
        plans.append(_WindowPlan(ticker, test, bars, count))
    return plans, left_out


@dataclass
class _EpisodeBatch:
    """Every ticker's windows then its whole test period, in one list to play at once."""

    episodes: list[Episode] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    books: dict[str, VoteBook] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    """The vote book's version of each ticker that has one."""
    spans: list[tuple[str, SplitRange, int, int]] = field(default_factory=list)
    """(ticker, test split, index of its first episode, its window count)."""


def _episode_batch(
    plans: list[_WindowPlan],
    warehouse: Warehouse,
    settings: Settings,
    params: RewardParams,
    config: RollingConfig,
) -> _EpisodeBatch:
    """The episodes, seeds and vote books of every planned ticker."""
    batch = _EpisodeBatch()
    for plan in plans:
        days = plan.bars.loc[plan.bars["date"] >= pd.Timestamp(plan.test.start), "date"].tolist()
        book = _vote_book(warehouse, settings, plan.ticker, days)
        if book is not None:
            batch.versions[plan.ticker], batch.books[plan.ticker] = book.version, book
        windows_of = window_episodes(plan.bars, plan.test, params.starting_cash, config)
        first = len(batch.episodes)
        batch.episodes += [*windows_of, test_period_episode(plan.bars, plan.test, params.starting_cash)]
        batch.seeds += [config.seed + i for i in range(len(windows_of))] + [config.seed]
        batch.spans.append((plan.ticker, plan.test, first, len(windows_of)))
    return batch


def _write_rolling_tables(
    warehouse: Warehouse, rows: pd.DataFrame, summary: pd.DataFrame, comparisons: pd.DataFrame
) -> None:
    """Replace ``eval.rolling``, ``eval.rolling_summary`` and ``eval.rolling_comparisons``."""
    clean = rows.astype(object).where(pd.notna(rows), None)
    replace_rows(warehouse, "eval.rolling", clean, "TRUE", [])
    replace_rows(
        warehouse, "eval.rolling_summary", summary.astype(object).where(pd.notna(summary), None), "TRUE", []
    )
    replace_rows(
        warehouse,
        "eval.rolling_comparisons",
        comparisons.astype(object).where(pd.notna(comparisons), None),
        "TRUE",
        [],
    )


def rolling_evaluation(
    settings: Settings,
    warehouse: Warehouse,
    policies: Sequence[str] | None = None,
    config: RollingConfig | None = None,
    tickers: Sequence[str] | None = None,
    run_id: str | None = None,
    log: Log | None = None,
    who: str = "cli",
    progress: Callable[[int, int], None] | None = None,
) -> RollingOutcome:
    """Every policy on every rolling window of each ticker's test split, plus the whole test
    period as one backtest; rows, summary and comparisons written to ``eval.*``, and the
    look at the test split recorded in ``eval.test_looks`` (``who``: cli, asset or web).

    A ticker whose test split is shorter than one window is left out and named
    (``RollingOutcome.left_out``); only when every ticker is does it raise EmptyDataError.
    ``progress(done, total)`` counts windows over all tickers.
    """
    config = config or RollingConfig()
    splits = load_splits(warehouse)
    params = RewardParams.from_settings(settings)
    names = ordered_policies(policies)
    frames, failures, windows = [], {}, 0
    plans, left_out = _window_plans(settings, warehouse, splits, tickers or splits.tickers, config)
    batch = _episode_batch(plans, warehouse, settings, params, config)
    versions = batch.versions
    total = sum(plan.windows for plan in plans)
    # every window of every ticker in one batch: a model policy decides step t of all of them at once
    step = (lambda k, n: progress(total * k // n, total)) if progress else None
    played = backtest_many(batch.episodes, names, params, batch.seeds, settings, batch.books, progress=step)
    if progress:
        progress(total, total)
    for ticker, test, first, count in batch.spans:
        results, whole = played[first : first + count], played[first + count]
        for result in (*results, whole):
            failures.update(result.failures)
        windows += len(results)
        frames.append(rolling_rows(results))
        write_backtests(warehouse, whole.runs, "test_period", None, versions.get(ticker), run_id)
        if log:
            log(f"{ticker}: {len(results)} windows over the test split {test.start} … {test.end}")
    for ticker, why in left_out.items():
        if log:
            log(f"{ticker} left out of the rolling evaluation: {why}")
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if rows.empty:
        reasons = "; ".join(f"{t}: {why}" for t, why in left_out.items())
        raise NoWindowsError(
            f"no rolling windows: no ticker has a test split with enough days ({reasons})", left_out
        )
    summary, comparisons = summarise(rows, config)
    _write_rolling_tables(warehouse, rows, summary, comparisons)
    played = [n for n in names if n not in failures]
    record_test_look(
        warehouse,
        who,
        "rolling_evaluation",
        sorted(rows["ticker"].unique()),
        model_versions(warehouse, played, versions.values()),
        look_settings(config.seed, params),
        run_id,
    )
    return RollingOutcome(rows, summary, comparisons, failures, versions, windows, left_out)
