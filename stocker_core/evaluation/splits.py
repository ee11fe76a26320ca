"""Chronological train / valid / test splits per ticker, and the guard that keeps test days
out of training and model selection.

From a ticker's stored trading days D_0 … D_(N−1): ``gap_days`` days are dropped
between train and valid and between valid and test, and the remaining N − 2·gap days
are cut train / valid / test in the configured proportions (default 60/20/20), oldest
first. An episode belongs to a split only if every one of its trading days is inside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import date

import pandas as pd

from stocker_core.errors import EmptyDataError, StockerError

SPLIT_NAMES = ("train", "valid", "test")


class SplitError(StockerError, ValueError):
    """Split settings or data that cannot give three non-empty chronological sets."""


class SplitLeakError(StockerError, ValueError):
    """Training or model selection asked for a day of the test split."""


@dataclass(frozen=True)
class SplitConfig:
    """Proportions of the days left after the gaps, and the gap length in trading days."""

    train: float = 0.6
    valid: float = 0.2
    test: float = 0.2
    gap_days: int = 30

    def __post_init__(self) -> None:
        parts = (self.train, self.valid, self.test)
        if min(parts) <= 0 or abs(sum(parts) - 1.0) > 1e-9:
            raise SplitError(f"split proportions must be positive and sum to 1, got {parts}")
        if self.gap_days < 30:
            raise SplitError(f"the gap between splits must be at least 30 trading days, got {self.gap_days}")


@dataclass(frozen=True)
class SplitRange:
    """One split of one ticker: its first and last trading day and how many days it holds."""

    ticker: str
    split: str
    start: date
    end: date
    trading_days: int
    gap_before: int

    def contains(self, day: date | pd.Timestamp) -> bool:
        return self.start <= pd.Timestamp(day).date() <= self.end

    def overlaps(self, first: date, last: date) -> bool:
        """True when any day of ``first`` … ``last`` lies in this split."""
        return first <= self.end and last >= self.start

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["start"], data["end"] = self.start.isoformat(), self.end.isoformat()
        return data


def compute_splits(ticker: str, days: Sequence[date | pd.Timestamp], config: SplitConfig | None = None):
    """The three SplitRanges of ``ticker`` from its sorted trading days."""
    config = config or SplitConfig()
    ordered = sorted({pd.Timestamp(d).date() for d in days})
    usable = len(ordered) - 2 * config.gap_days
    n_train = int(usable * config.train)
    n_valid = int(usable * config.valid)
    n_test = usable - n_train - n_valid
    if min(n_train, n_valid, n_test) < 1:
        raise SplitError(
            f"{ticker}: {len(ordered)} trading day(s) cannot hold train, valid and test with "
            f"{config.gap_days}-day gaps; store more history"
        )
    bounds = [
        ("train", 0, n_train, 0),
        ("valid", n_train + config.gap_days, n_valid, config.gap_days),
        ("test", n_train + n_valid + 2 * config.gap_days, n_test, config.gap_days),
    ]
    return [
        SplitRange(ticker, name, ordered[lo], ordered[lo + size - 1], size, gap)
        for name, lo, size, gap in bounds
    ]


@dataclass(frozen=True)
class Splits:
    """Every ticker's split ranges, with the questions training code asks of them."""

    ranges: tuple[SplitRange, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    """(ticker, why) of tickers with too little history to split."""

    @classmethod
    def from_rows(cls, rows: Iterable[dict]) -> Splits:
        ranges = []
        for r in rows:
            ranges.append(
                SplitRange(
                    str(r["ticker"]),
                    str(r["split"]),
                    pd.Timestamp(r["start_date"]).date(),
                    pd.Timestamp(r["end_date"]).date(),
                    int(r["trading_days"]),
                    int(r["gap_before"]),
                )
            )
        return cls(tuple(ranges))

    @property
    def tickers(self) -> list[str]:
        return sorted({r.ticker for r in self.ranges})

    def range_of(self, ticker: str, split: str) -> SplitRange:
        """The ``split`` range of ``ticker``; SplitError when there is none."""
        if split not in SPLIT_NAMES:
            raise SplitError(f"unknown split {split!r}: use one of {', '.join(SPLIT_NAMES)}")
        for r in self.ranges:
            if r.ticker == ticker and r.split == split:
                return r
        raise SplitError(f"no {split} split for {ticker}: materialize `splits` after its prices")

    def split_of(self, ticker: str, day: date | pd.Timestamp) -> str | None:
        """``train`` / ``valid`` / ``test`` for a day of ``ticker``, or None (a gap, or outside)."""
        for r in self.ranges:
            if r.ticker == ticker and r.contains(day):
                return r.split
        return None

    def dates_in_split(self, ticker: str, split: str, days: Iterable[date | pd.Timestamp]) -> list[date]:
        """The ones of ``days`` inside ``ticker``'s ``split``."""
        r = self.range_of(ticker, split)
        return [pd.Timestamp(d).date() for d in days if r.contains(d)]

    def episode_split(self, ticker: str, episode_days: Sequence[date | pd.Timestamp]) -> str | None:
        """The split holding every trading day of an episode, or None if it straddles one."""
        found = {self.split_of(ticker, d) for d in episode_days}
        return found.pop() if len(found) == 1 else None

    def episodes_in_split(self, split: str, episodes: dict[str, Sequence[date | pd.Timestamp]]) -> list[str]:
        """Keys of ``episodes`` ({``TICKER|YYYY-MM-01``: its trading days}) wholly inside ``split``."""
        return [
            key
            for key, days in episodes.items()
            if len(days) and self.episode_split(key.split("|", 1)[0], days) == split
        ]

    def assert_not_test(self, ticker: str, days: Iterable[date | pd.Timestamp]) -> None:
        """Raise SplitLeakError if any of ``days`` is in ``ticker``'s test split (or later).

        Call it wherever training or model selection reads data."""
        test = self.range_of(ticker, "test")
        leaked = sorted({pd.Timestamp(d).date() for d in days if pd.Timestamp(d).date() >= test.start})
        if leaked:
            raise SplitLeakError(
                f"{ticker}: {len(leaked)} day(s) from {leaked[0]} on belong to the test split "
                f"({test.start} … {test.end}); training and model selection may use train/valid only"
            )

    def rows(self) -> list[dict[str, object]]:
        return [r.as_dict() for r in self.ranges]


def training_days(splits: Splits, ticker: str, days: Iterable[date | pd.Timestamp], split: str) -> list[date]:
    """The days a dataset builder may use for ``split`` (``train`` or ``valid``).

    Asking for ``test`` raises SplitLeakError: the test split is only for the final
    backtest and the rolling evaluation."""
    if split == "test":
        raise SplitLeakError("the test split is reserved for evaluation; build datasets from train/valid")
    chosen = splits.dates_in_split(ticker, split, days)
    splits.assert_not_test(ticker, chosen)
    return chosen


def splits_from_prices(
    prices: pd.DataFrame, config: SplitConfig | None = None, tickers: Sequence[str] | None = None
) -> Splits:
    """Splits of every ticker in a long ``ticker, date`` frame (e.g. ``market.prices``).

    A ticker with too little history for three sets and their gaps is left out and named in
    ``Splits.skipped``; SplitError when no ticker has enough."""
    if prices.empty:
        raise EmptyDataError("no stored prices to split: materialize prices first")
    ranges: list[SplitRange] = []
    skipped: dict[str, str] = {}
    for ticker, part in prices.groupby("ticker", sort=True):
        if tickers is not None and ticker not in tickers:
            continue
        try:
            ranges.extend(compute_splits(str(ticker), part["date"].tolist(), config))
        except SplitError as exc:
            skipped[str(ticker)] = str(exc)
    if not ranges and skipped:
        raise SplitError("; ".join(skipped.values()))
    return Splits(tuple(ranges), tuple(skipped.items()))


def save_splits(warehouse, splits: Splits, config: SplitConfig | None = None) -> int:
    """Replace ``eval.splits`` rows of the tickers in ``splits``."""
    from datetime import datetime

    from stocker_core.evaluation.store import replace_rows

    config = config or SplitConfig()
    frame = pd.DataFrame(
        [
            {
                "ticker": r.ticker,
                "split": r.split,
                "start_date": r.start,
                "end_date": r.end,
                "trading_days": r.trading_days,
                "gap_before": r.gap_before,
                "train_share": config.train,
                "valid_share": config.valid,
                "test_share": config.test,
                "gap_days": config.gap_days,
                "created_at": datetime.now(),
            }
            for r in splits.ranges
        ]
    )
    return replace_rows(
        warehouse, "eval.splits", frame, "ticker IN (SELECT unnest(?::VARCHAR[]))", [splits.tickers]
    )


def load_splits(warehouse) -> Splits:
    """The stored splits (``eval.splits``); SplitError telling what to run when there are none."""
    from stocker_core.evaluation.store import read_eval

    rows = read_eval(warehouse, "eval.splits")
    if rows.empty:
        raise SplitError(
            "no splits stored: materialize the `splits` asset (stocker materialize --groups evaluation)"
        )
    return Splits.from_rows(rows.to_dict("records"))
