"""The rule council over many days of one ticker at once.

The per-day path builds a DecisionContext (point-in-time cuts of every frame) per day and
runs each analyst on it. Here the ticker's inputs are turned into arrays once — closes,
highs and lows, indicator columns, peer / commodity / rate closes, the text events with
their publication instants — and each day reads slices of them: the bars up to the day
(a binary search), the events published strictly before the day's decision cut-off. The
analysts' ``*_vote`` functions then run on those slices, so every vote equals the per-day
one (tests/council/test_rule_batch.py compares them).

A specialist's batch rule (``Specialist.batch_rule``) reads one ``BatchDay``; a registered
specialist without one gets its per-day rule on the day's context (built once per day for
all such roles), so a new specialist needs no code here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np
import pandas as pd

from stocker_core.context.decision import (
    NEWS_WINDOW_DAYS,
    RATE_SYMBOLS,
    CouncilInputs,
    DecisionContext,
    current_series,
)
from stocker_core.context.point_in_time import decision_cutoff
from stocker_core.council.analysts import (
    abstain,
    chart_pattern_vote,
    forum_sentiment_vote,
    geopolitics_vote,
    indicator_vote,
    monthly_returns,
    news_vote,
    peer_commodity_vote,
    seasonal_trend_vote,
)
from stocker_core.council.models import SpecialistVote
from stocker_core.council.registry import SPECIALIST_NAMES, specialist

_DAY_NS = 86_400 * 10**9


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
        return ((day_ns - self.dates[rows]) // _DAY_NS).astype(float)

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


_EMPTY = np.zeros(0)


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
            return _EMPTY
        dates, values = self.symbols[symbol]
        return values[dates <= day_ns]

    def current_closes_of(self, symbol: str | None, day_ns: int) -> np.ndarray:
        """Those closes when the series has the day's close, else empty (``current_series``)."""
        if symbol is None or symbol not in self.symbols:
            return _EMPTY
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
        self.end = int(np.searchsorted(arrays.bar_dates, self.day_ns + _DAY_NS, "left"))
        self.cutoff = decision_cutoff(day)
        self.cutoff_ns = self.cutoff.value

    @cached_property
    def context(self) -> DecisionContext:
        """The day's point-in-time context (the per-day path's), for a rule without a batch rule."""
        return self.inputs.context(self.day)


def chart_pattern_batch(d: BatchDay) -> SpecialistVote:
    """``chart_pattern`` on the last (up to) 60 bars up to the day."""
    a, lo = d.arrays, max(0, d.end - 60)
    return chart_pattern_vote(a.close[lo : d.end], a.high[lo : d.end], a.low[lo : d.end])


def seasonal_trend_batch(d: BatchDay) -> SpecialistVote:
    """``seasonal_trend`` on the closes up to the day."""
    return seasonal_trend_vote(d.arrays.close[: d.end], d.arrays.monthly, d.day)


def indicator_batch(d: BatchDay) -> SpecialistVote:
    """``indicator`` on the last indicator row up to the day."""
    a = d.arrays
    ind_end = int(np.searchsorted(a.indicator_dates, d.day_ns + _DAY_NS, "left"))
    if ind_end == 0 or d.end == 0:
        return abstain("indicator", "no indicators")
    row = {c: values[ind_end - 1] for c, values in a.indicator_columns.items()}
    return indicator_vote(row, float(a.close[d.end - 1]))


def news_batch(d: BatchDay) -> SpecialistVote:
    """``news`` on the headlines published in the window before the day's cut-off."""
    news = d.arrays.news
    since = (d.cutoff - pd.Timedelta(days=NEWS_WINDOW_DAYS)).value
    rows = news.visible(d.cutoff_ns, since)
    return news_vote(
        news.column("headline", rows),
        news.column("sentiment_label", rows),
        news.ages(rows, d.day_ns),
        d.inputs.ticker,
        d.day,
    )


def forum_sentiment_batch(d: BatchDay) -> SpecialistVote:
    """``forum_sentiment`` on the posts published before the day's cut-off."""
    forums = d.arrays.forums
    rows = forums.visible(d.cutoff_ns)
    return forum_sentiment_vote(
        forums.column("post_text", rows),
        forums.values["score"][rows] if len(rows) else _EMPTY,
        forums.ages(rows, d.day_ns),
        d.inputs.ticker,
        d.day,
    )


def peer_commodity_batch(d: BatchDay) -> SpecialistVote:
    """``peer_commodity`` on the closes up to the day (peers and commodity with the day's close)."""
    a, inputs = d.arrays, d.inputs
    return peer_commodity_vote(
        a.close[: d.end],
        {p: a.current_closes_of(p, d.day_ns) for p in inputs.peers},
        inputs.commodity,
        a.current_closes_of(inputs.commodity, d.day_ns) if inputs.commodity else None,
    )


def geopolitics_batch(d: BatchDay) -> SpecialistVote:
    """``geopolitics`` on the macro events before the day's cut-off and the rate closes."""
    macro = d.arrays.macro
    rows = macro.visible(d.cutoff_ns)
    return geopolitics_vote(
        macro.column("headline", rows),
        macro.column("policy_signal", rows),
        macro.ages(rows, d.day_ns),
        {s: d.arrays.closes_of(s, d.day_ns) for s in RATE_SYMBOLS},
        d.day,
    )


def rule_votes(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = SPECIALIST_NAMES
) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
    """Every rule analyst's vote in ``roles`` on each of ``days`` (normalized timestamps):
    a specialist's batch rule, else its per-day rule on the day's context."""
    arrays = TickerArrays(inputs)
    chosen = [(role, specialist(role)) for role in roles]
    out: dict[tuple[str, pd.Timestamp], SpecialistVote] = {}
    for day in days:
        d = arrays.day(day)
        for role, spec in chosen:
            out[(role, d.day)] = spec.batch_rule(d) if spec.batch_rule is not None else spec.rule(d.context)
    return out
