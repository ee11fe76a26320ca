"""The arrays the batched rule council reads: a ticker's inputs turned into arrays once
(``TickerArrays``: closes, highs and lows, indicator columns, peer / commodity / rate closes,
the text events with their publication instants) and one day's cut of them (``BatchDay``: the
bars up to the day, the events published strictly before the day's decision cut-off). A
specialist's batch rule (``Specialist.batch_rule``, ``council/rule_batch.py``) reads one
``BatchDay``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np
import pandas as pd

from stocker_core.context.decision import CouncilInputs, DecisionContext, current_series
from stocker_core.context.point_in_time import decision_cutoff

DAY_NS = 86_400 * 10**9
"""Nanoseconds in a day."""


def monthly_returns(close: np.ndarray, dates: pd.Series | pd.DatetimeIndex) -> pd.Series:
    """Month-end to month-end returns of a close series (indexed by month end)."""
    return pd.Series(close, index=pd.DatetimeIndex(dates)).resample("ME").last().pct_change().dropna()


class _Events:
    """One kind of text event as arrays: publication instants (UTC ns), dates (ns) and columns."""

    def __init__(self, frame: pd.DataFrame, columns: Sequence[str]) -> None:
        self.size = len(frame)
        if self.size:
            instants = pd.to_datetime(frame["published_at"], utc=True)
            self.published = instants.to_numpy(dtype="datetime64[ns]").astype(np.int64)
            self.dates = pd.to_datetime(frame["date"]).to_numpy(dtype="datetime64[ns]").astype(np.int64)
        else:
            self.published = self.dates = np.zeros(0, dtype=np.int64)
        self.columns = {c: (list(frame[c]) if self.size else []) for c in columns}
        self.values = {
            c: (frame[c].to_numpy(float) if self.size else np.zeros(0)) for c in ("score",) if c in frame
        }

    def visible(self, cutoff_ns: int, since_ns: int | None = None) -> np.ndarray:
        """Row positions (in frame order) published strictly before the cut-off (and at or
        after ``since_ns``)."""
        keep = self.published < cutoff_ns
        if since_ns is not None:
            keep &= self.published >= since_ns
        return np.flatnonzero(keep)

    def ages(self, rows: np.ndarray, day_ns: int) -> np.ndarray:
        """Whole days from each row's date to the day (floor, as Timedelta.days)."""
        return ((day_ns - self.dates[rows]) // DAY_NS).astype(float)

    def column(self, name: str, rows: np.ndarray) -> list:
        values = self.columns[name]
        return [values[i] for i in rows]


def _symbol_closes(inputs: CouncilInputs) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{symbol: (normalized dates ns, closes)} of the long context closes, in frame order."""
    frame = inputs.context_closes
    out = {}
    if frame is None or len(frame) == 0:
        return out
    for symbol, part in frame.groupby("symbol", sort=False):
        dates = pd.to_datetime(part["date"])
        if getattr(dates.dt, "tz", None) is not None:
            dates = dates.dt.tz_localize(None)
        out[str(symbol)] = (
            dates.dt.normalize().to_numpy(dtype="datetime64[ns]").astype(np.int64),
            part["close"].to_numpy(float),
        )
    return out


EMPTY = np.zeros(0)


class TickerArrays:
    """A ticker's council inputs as arrays, each built once on first use: closes, highs and
    lows (NaN filled by the close), month-end returns, indicator columns, the text events
    and the long context closes."""

    def __init__(self, inputs: CouncilInputs) -> None:
        self.inputs = inputs
        bars = inputs.bars
        self.bar_dates = pd.to_datetime(bars["date"]).to_numpy(dtype="datetime64[ns]").astype(np.int64)
        if len(self.bar_dates) and np.any(np.diff(self.bar_dates) < 0):
            raise ValueError(f"{inputs.ticker}: bars must be sorted by date")

    @cached_property
    def close(self) -> np.ndarray:
        return self.inputs.bars["close"].to_numpy(float)

    @cached_property
    def high(self) -> np.ndarray:
        bars = self.inputs.bars
        return bars["high"].fillna(bars["close"]).to_numpy(float)

    @cached_property
    def low(self) -> np.ndarray:
        bars = self.inputs.bars
        return bars["low"].fillna(bars["close"]).to_numpy(float)

    @cached_property
    def monthly(self) -> pd.Series:
        bars = self.inputs.bars
        return monthly_returns(self.close, bars["date"]) if len(bars) else pd.Series(dtype=float)

    @cached_property
    def indicator_dates(self) -> np.ndarray:
        indicators = self.inputs._indicators  # causal, full history (as the per-day path cuts them)
        if indicators is None or not len(indicators):
            return np.zeros(0, dtype=np.int64)
        return pd.to_datetime(indicators["date"]).to_numpy(dtype="datetime64[ns]").astype(np.int64)

    @cached_property
    def indicator_columns(self) -> dict[str, np.ndarray]:
        indicators = self.inputs._indicators
        if indicators is None:
            return {}
        return {c: indicators[c].to_numpy() for c in indicators.columns if c != "date"}

    @cached_property
    def news(self) -> _Events:
        return _Events(self.inputs.text.news, ("headline", "sentiment_label"))

    @cached_property
    def forums(self) -> _Events:
        return _Events(self.inputs.text.forums, ("post_text", "score"))

    @cached_property
    def macro(self) -> _Events:
        return _Events(self.inputs.text.macro, ("headline", "policy_signal"))

    @cached_property
    def symbols(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return _symbol_closes(self.inputs)

    def closes_of(self, symbol: str | None, day_ns: int) -> np.ndarray:
        """The closes of ``symbol`` dated on or before the day (empty when unknown)."""
        if symbol is None or symbol not in self.symbols:
            return EMPTY
        dates, values = self.symbols[symbol]
        return values[dates <= day_ns]

    def current_closes_of(self, symbol: str | None, day_ns: int) -> np.ndarray:
        """Those closes when the series has the day's close, else empty (``current_series``)."""
        if symbol is None or symbol not in self.symbols:
            return EMPTY
        return current_series(*self.symbols[symbol], day_ns)

    def day(self, day: pd.Timestamp) -> BatchDay:
        """Where ``day`` cuts these arrays."""
        return BatchDay(self, pd.Timestamp(day).normalize())


class BatchDay:
    """One day of the batch: the ticker's arrays (``arrays``), the bars dated on or before
    the day (``[:end]``) and the decision cut-off of the text events."""

    def __init__(self, arrays: TickerArrays, day: pd.Timestamp) -> None:
        self.arrays = arrays
        self.inputs = arrays.inputs
        self.day = day
        self.day_ns = day.value
        # bars dated on or before the day (point_in_time compares by day)
        self.end = int(np.searchsorted(arrays.bar_dates, self.day_ns + DAY_NS, "left"))
        self.cutoff = decision_cutoff(day)
        self.cutoff_ns = self.cutoff.value

    @cached_property
    def context(self) -> DecisionContext:
        """The day's point-in-time context (the per-day path's), for a rule without a batch rule."""
        return self.inputs.context(self.day)
