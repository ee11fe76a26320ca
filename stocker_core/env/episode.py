"""Episodes: one ticker over ``episode_months`` calendar months of trading days."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from stocker_core.config import Settings, get_settings
from stocker_core.decision_context.point_in_time import point_in_time
from stocker_core.env.tasks import resolve_episode_key
from stocker_core.errors import EmptyDataError
from stocker_core.market.bars import load_bars, missing_bars_message
from stocker_core.market.calendar import month_end
from stocker_core.market.gaps import SessionGap, session_gaps
from stocker_core.market.validation import parse_partition_key
from stocker_core.warehouse.db import Warehouse

HISTORY_START = date(1900, 1, 1)


@dataclass(frozen=True, eq=False)
class Episode:
    """One ticker over a window of trading days, with the bars that came before it."""

    key: str
    """Partition key ``TICKER|YYYY-MM-01`` of the window's first month."""
    ticker: str
    window_start: date
    """First calendar day of the window (inclusive)."""
    window_end: date
    """First calendar day after the window (exclusive)."""
    bars: pd.DataFrame
    """Normalized bars inside the window, one per trading day."""
    history: pd.DataFrame
    """Every bar before the window (for indicators and the council)."""
    starting_cash: float
    task_id: str | None = None
    source: str = ""
    """Where history and window both came from: ``warehouse`` or the source's name."""
    gaps: tuple[SessionGap, ...] = ()
    """Holes of more than ``MAX_MISSING_SESSIONS`` NYSE sessions in history or window."""
    closes: np.ndarray = field(init=False, repr=False)
    dates: pd.DatetimeIndex = field(init=False, repr=False)
    _all_bars: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "closes", self.bars["close"].to_numpy(dtype=np.float64))
        object.__setattr__(self, "dates", pd.DatetimeIndex(self.bars["date"]))
        full = pd.concat([self.history, self.bars], ignore_index=True)
        object.__setattr__(self, "_all_bars", full)

    @property
    def trading_days(self) -> int:
        return len(self.bars)

    @property
    def start(self) -> date:
        """First trading day."""
        return self.dates[0].date()

    @property
    def end(self) -> date:
        """Last trading day."""
        return self.dates[-1].date()

    @property
    def all_closes(self) -> np.ndarray:
        """History then window closes, oldest first."""
        return self._all_bars["close"].to_numpy(dtype=np.float64)

    def date_of(self, step: int) -> date:
        """The trading day of step ``step`` (0-based)."""
        if not 0 <= step < self.trading_days:
            raise IndexError(f"step {step} outside 0..{self.trading_days - 1}")
        return self.dates[step].date()

    def as_of(self, step_or_date: int | date | pd.Timestamp) -> pd.DataFrame:
        """Every bar (history and window) dated on or before that step's date — never later."""
        when = self.date_of(step_or_date) if isinstance(step_or_date, int) else step_or_date
        return point_in_time(self._all_bars, when)

    def summary(self) -> dict[str, object]:
        return {
            "key": self.key,
            "task_id": self.task_id,
            "ticker": self.ticker,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "trading_days": self.trading_days,
            "starting_cash": self.starting_cash,
            "source": self.source,
            "gaps": [str(gap) for gap in self.gaps],
        }


def window_bounds(month: date, months: int) -> tuple[date, date]:
    """[start, end) of a window of ``months`` calendar months starting at ``month``."""
    if months < 1:
        raise ValueError(f"episode_months must be >= 1, got {months}")
    end = month
    for _ in range(months):
        end = month_end(end)
    return month, end


def load_episode(
    name_or_key: str, settings: Settings | None = None, warehouse: Warehouse | None = None
) -> Episode:
    """The episode of a task alias (``task_easy``) or a partition key (``AAPL|2023-08-01``).

    History and window are read in one call, so they come from one place: the
    warehouse when it covers them with bars from the configured source
    (``STOCKER_SOURCE``), otherwise that source; ``Episode.source`` says which, and
    ``Episode.gaps`` lists holes of more than ``MAX_MISSING_SESSIONS`` sessions.
    Raises InvalidNameError for an unknown task or a malformed key, EmptyDataError
    when there are no bars.
    """
    settings = settings or get_settings()
    key, task_id = resolve_episode_key(name_or_key)
    ticker, month = parse_partition_key(key)
    _, end = window_bounds(month, settings.episode_months)
    bars, source = load_bars(settings, ticker, None, end, warehouse)
    return episode_from_bars(key, bars, settings, source, task_id)


def episode_from_bars(
    key: str, bars: pd.DataFrame, settings: Settings, source: str = "", task_id: str | None = None
) -> Episode:
    """The episode ``key`` cut from a ticker's sorted bars (history before the window kept).

    Lets a caller that builds many episodes of one ticker read its bars once.
    """
    ticker, month = parse_partition_key(key)
    start, end = window_bounds(month, settings.episode_months)
    lo, hi = bars["date"].searchsorted([pd.Timestamp(start), pd.Timestamp(end)])
    if hi <= lo:
        raise EmptyDataError(missing_bars_message(settings, ticker, start, end, bars.iloc[:hi], source))
    cols = ["date", "open", "high", "low", "close", "adj_close", "volume"]
    return Episode(
        gaps=tuple(session_gaps(bars["date"].iloc[:hi])),
        key=key,
        ticker=ticker,
        window_start=start,
        window_end=end,
        bars=bars[cols].iloc[lo:hi].reset_index(drop=True),
        history=bars[cols].iloc[:lo].reset_index(drop=True),
        starting_cash=float(settings.starting_cash),
        task_id=task_id,
        source=source,
    )


def episode_from_closes(
    closes: np.ndarray | list[float],
    ticker: str = "SYN",
    start: date = date(2020, 1, 1),
    starting_cash: float = 10_000.0,
) -> Episode:
    """A synthetic episode over business days (for tests and benchmarks)."""
    dates = pd.bdate_range(start, periods=len(closes))
    px = np.asarray(closes, dtype=np.float64)
    bars = pd.DataFrame(
        {
            "date": dates.astype("datetime64[ns]"),
            "open": px,
            "high": px,
            "low": px,
            "close": px,
            "adj_close": px,
            "volume": np.zeros(len(px)),
        }
    )
    first = dates[0].date()
    return Episode(
        key=f"{ticker}|{first.replace(day=1).isoformat()}",
        ticker=ticker,
        window_start=first,
        window_end=(dates[-1] + pd.Timedelta(days=1)).date(),
        bars=bars,
        history=bars.iloc[:0],
        starting_cash=starting_cash,
        source="synthetic",
    )
