"""The arrays the rule council reads, and the days it votes on.

``TickerArrays``: one ticker's council inputs turned into arrays once — closes, highs and
lows, their logs, the indicator columns, the text events sorted by publication instant,
the context closes per symbol. ``DayGrid``: the days voted on and where each cuts those
arrays, for all days at once.

Point in time (the cuts of ``decision_context.decision.build_context``): an array rule reads bars
only below ``DayGrid.end`` (dated on or before the day), the indicator row below
``indicator_end``, a symbol's closes below ``SymbolCloses.count(day)``, and text events
only through ``EventArrays.pairs`` (published strictly before the day's decision cut-off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from stocker_core.decision_context.decision import CouncilInputs, DecisionContext
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.market.calendar import NEW_YORK, REGULAR_CLOSE, trading_calendar

DAY_NS = 86_400 * 10**9
"""Nanoseconds in a day."""


def monthly_returns(close: np.ndarray, dates: pd.Series | pd.DatetimeIndex) -> pd.Series:
    """Month-end to month-end returns of a close series (indexed by month end)."""
    return pd.Series(close, index=pd.DatetimeIndex(dates)).resample("ME").last().pct_change().dropna()


def _ns(values: pd.Series) -> np.ndarray:
    """Nanoseconds (UTC for tz-aware values) of a date column."""
    if not isinstance(values.dtype, np.dtype | pd.DatetimeTZDtype) or values.dtype.kind != "M":
        values = pd.to_datetime(values)
    return values.to_numpy(dtype="datetime64[ns]").astype(np.int64)


def decision_cutoffs(days_ns: np.ndarray) -> np.ndarray:
    """``point_in_time.decision_cutoff`` (UTC ns) of many normalized days at once: the
    session's NYSE close, else 16:00 New York."""
    if len(days_ns) <= 8:  # a few days: the cached per-day cut-off is quicker
        return np.array([decision_cutoff(pd.Timestamp(int(d))).value for d in days_ns], dtype=np.int64)
    days = pd.DatetimeIndex(days_ns.astype("datetime64[ns]"))
    regular = (days + REGULAR_CLOSE).tz_localize(NEW_YORK).tz_convert("UTC").asi8
    calendar = trading_calendar()
    session = calendar.closes.reindex(days)
    inside = (days >= calendar.first_session) & (days <= calendar.last_session) & session.notna().to_numpy()
    return np.where(inside, pd.DatetimeIndex(session).asi8, regular)


@dataclass(frozen=True)
class EventPairs:
    """The (day, event) pairs a rule reads: for day ``i`` the events at frame positions
    ``pos[bounds[i]:bounds[i + 1]]`` (frame order), aged ``ages`` whole days."""

    pos: np.ndarray
    ages: np.ndarray
    bounds: np.ndarray


class EventArrays:
    """One kind of text event as arrays: publication instants (UTC ns), dates (ns), the
    order by publication, and the text columns by frame position."""

    def __init__(self, frame: pd.DataFrame, columns: Sequence[str]) -> None:
        self.size = len(frame)
        if self.size:
            self.published = _ns(pd.to_datetime(frame["published_at"], utc=True))
            self.dates = _ns(frame["date"])
        else:
            self.published = self.dates = np.zeros(0, dtype=np.int64)
        self.order = np.argsort(self.published, kind="stable")
        self.sorted_published = self.published[self.order]
        # how much earlier than its date an event may be published (bounds an age window)
        self.min_lag = int((self.published - self.dates).min()) if self.size else 0
        self.columns = {c: (list(frame[c]) if self.size else []) for c in columns}
        self.scores = frame["score"].to_numpy(float) if self.size and "score" in frame else np.zeros(0)

    def pairs(self, grid: DayGrid, since_ns: np.ndarray, max_age: int | None = None) -> EventPairs:
        """Per day, the events published in ``[since_ns, cut-off)`` (and, with ``max_age``,
        dated at most that many whole days before the day), in frame order."""
        start = np.searchsorted(self.sorted_published, since_ns, "left")
        stop = np.maximum(np.searchsorted(self.sorted_published, grid.cutoff_ns, "left"), start)
        counts = stop - start
        day = np.repeat(np.arange(len(grid)), counts)
        first = np.repeat(start - (np.cumsum(counts) - counts), counts)
        pos = self.order[np.arange(int(counts.sum())) + first]
        keep = np.lexsort((pos, day))
        day, pos = day[keep], pos[keep]
        ages = ((grid.day_ns[day] - self.dates[pos]) // DAY_NS).astype(float)
        if max_age is not None:
            recent = ages <= max_age
            day, pos, ages = day[recent], pos[recent], ages[recent]
        return EventPairs(pos, ages, np.searchsorted(day, np.arange(len(grid) + 1), "left"))

    def age_window(self, grid: DayGrid, max_age: int) -> EventPairs:
        """Per day, the visible events at most ``max_age`` whole days old."""
        # an event dated after day - (max_age + 1) days is published after that + min_lag
        return self.pairs(grid, grid.day_ns - (max_age + 1) * DAY_NS + self.min_lag, max_age)


@dataclass(frozen=True)
class SymbolCloses:
    """A context symbol's closes: normalized dates (sorted), values, positions of non-NaN values."""

    dates: np.ndarray
    values: np.ndarray
    valid: np.ndarray

    def count(self, day_ns: np.ndarray) -> np.ndarray:
        """How many closes are dated on or before each day."""
        return np.searchsorted(self.dates, day_ns, "right")

    def current(self, day_ns: np.ndarray) -> np.ndarray:
        """Whether each day has its own close (``decision_context.decision.current_series``)."""
        count = self.count(day_ns)
        return (
            (count > 0) & (self.dates[np.maximum(count - 1, 0)] == day_ns) if len(self.dates) else count > 0
        )


def _symbol_closes(frame: pd.DataFrame | None) -> dict[str, SymbolCloses]:
    """{symbol: its closes} of the long context closes (date, symbol, close), in frame order."""
    out: dict[str, SymbolCloses] = {}
    if frame is None or len(frame) == 0:
        return out
    dates = frame["date"]
    if dates.dtype == "datetime64[ns]":  # normalized frames (CouncilInputs, contexts)
        ns = dates.to_numpy().astype(np.int64)
        ns = ns - ns % DAY_NS
    else:
        dates = pd.to_datetime(dates)
        if getattr(dates.dt, "tz", None) is not None:
            dates = dates.dt.tz_localize(None)
        ns = dates.dt.normalize().to_numpy(dtype="datetime64[ns]").astype(np.int64)
    codes, symbols = pd.factorize(frame["symbol"])
    closes = frame["close"].to_numpy(float)
    for code, symbol in enumerate(symbols):
        rows = np.flatnonzero(codes == code)
        day_ns, values = ns[rows], closes[rows]
        if np.any(np.diff(day_ns) < 0):
            raise ValueError(f"context closes of {symbol}: must be sorted by date")
        out[str(symbol)] = SymbolCloses(day_ns, values, np.flatnonzero(~np.isnan(values)))
    return out


class TickerArrays:
    """A ticker's council inputs as arrays, each built once on first use."""

    def __init__(
        self,
        ticker: str,
        bars: pd.DataFrame,
        indicators: pd.DataFrame | None,
        text: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
        context_closes: pd.DataFrame | None,
        peers: Sequence[str],
        commodity: str | None,
        context_of: Callable[[pd.Timestamp], DecisionContext],
    ) -> None:
        self.ticker, self.bars, self.indicators = ticker, bars, indicators
        self.news_frame, self.forums_frame, self.macro_frame = text
        self.context_closes, self.peers, self.commodity = context_closes, tuple(peers), commodity
        self.context_of = context_of
        self.bar_dates = _ns(bars["date"]) if len(bars) else np.zeros(0, dtype=np.int64)
        if np.any(np.diff(self.bar_dates) < 0):
            raise ValueError(f"{ticker}: bars must be sorted by date")

    @classmethod
    def from_inputs(cls, inputs: CouncilInputs) -> TickerArrays:
        """The arrays of a ticker's full-history inputs (their indicators are causal)."""
        text = inputs.text
        return cls(
            inputs.ticker,
            inputs.bars,
            inputs._indicators,
            (text.news, text.forums, text.macro),
            inputs.context_closes,
            inputs.peers,
            inputs.commodity,
            inputs.context,
        )

    @classmethod
    def from_context(cls, ctx: DecisionContext) -> TickerArrays:
        """The arrays of one day's context (already cut at its decision)."""

        def context_of(day: pd.Timestamp) -> DecisionContext:
            if pd.Timestamp(day).normalize() != ctx.date:
                raise ValueError(f"a context of {ctx.date.date()} cannot vote on {day}")
            return ctx

        frames = (ctx.news, ctx.forums, ctx.macro)
        return cls(
            ctx.ticker,
            ctx.bars,
            ctx.indicators,
            frames,
            ctx.context_closes,
            ctx.peers,
            ctx.commodity,
            context_of,
        )

    @cached_property
    def close(self) -> np.ndarray:
        return self.bars["close"].to_numpy(float) if len(self.bars) else np.zeros(0)

    @cached_property
    def high(self) -> np.ndarray:
        """Highs, a missing one filled by the close."""
        return self.bars["high"].fillna(self.bars["close"]).to_numpy(float) if len(self.bars) else np.zeros(0)

    @cached_property
    def low(self) -> np.ndarray:
        """Lows, a missing one filled by the close."""
        return self.bars["low"].fillna(self.bars["close"]).to_numpy(float) if len(self.bars) else np.zeros(0)

    @cached_property
    def log_close(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(self.close)

    @cached_property
    def log_diff(self) -> np.ndarray:
        """``log_close[i + 1] - log_close[i]``."""
        return np.diff(self.log_close)

    @cached_property
    def valid_close(self) -> np.ndarray:
        """Positions of the non-NaN closes."""
        return np.flatnonzero(~np.isnan(self.close))

    @cached_property
    def monthly(self) -> pd.Series:
        return monthly_returns(self.close, self.bars["date"]) if len(self.bars) else pd.Series(dtype=float)

    @cached_property
    def indicator_dates(self) -> np.ndarray:
        if self.indicators is None or not len(self.indicators):
            return np.zeros(0, dtype=np.int64)
        return _ns(self.indicators["date"])

    @cached_property
    def indicator_columns(self) -> dict[str, np.ndarray]:
        if self.indicators is None:
            return {}
        return {c: self.indicators[c].to_numpy() for c in self.indicators.columns if c != "date"}

    @cached_property
    def news(self) -> EventArrays:
        return EventArrays(self.news_frame, ("headline", "sentiment_label"))

    @cached_property
    def forums(self) -> EventArrays:
        return EventArrays(self.forums_frame, ("post_text",))

    @cached_property
    def macro(self) -> EventArrays:
        return EventArrays(self.macro_frame, ("headline", "policy_signal"))

    @cached_property
    def symbols(self) -> dict[str, SymbolCloses]:
        return _symbol_closes(self.context_closes)


class DayGrid:
    """The days the rules vote on (normalized, each once, in the given order) and where
    each cuts a ticker's arrays."""

    def __init__(self, arrays: TickerArrays, days: Sequence[pd.Timestamp]) -> None:
        self.days = list(dict.fromkeys(pd.Timestamp(d).normalize() for d in days))
        self.day_ns = np.array([d.value for d in self.days], dtype=np.int64)
        next_day = self.day_ns + DAY_NS
        self.end = np.searchsorted(arrays.bar_dates, next_day, "left")  # bars dated on or before
        self.indicator_end = np.searchsorted(arrays.indicator_dates, next_day, "left")
        self.cutoff_ns = decision_cutoffs(self.day_ns) if len(self.days) else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.days)


def window_rows(values: np.ndarray, ends: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` values before each end (``values[end - width:end]``), one row per end."""
    return values[ends[:, None] - width + np.arange(width)]


def trailing_return(
    values: np.ndarray, valid: np.ndarray, count: np.ndarray, days: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """Per cut (``values[:count]``), the return over the last ``days`` non-NaN values
    (fewer when fewer exist) and whether it is defined (at least 6 non-NaN values)."""
    m = np.searchsorted(valid, count, "left")
    ok = m >= 6
    if not len(valid):
        return np.full(len(count), np.nan), ok
    n = np.minimum(days, m - 1)
    last = values[valid[np.clip(m - 1, 0, None)]]
    first = values[valid[np.clip(m - 1 - n, 0, None)]]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, last / first - 1, np.nan), ok
