"""The rule council over many days of one ticker at once.

The per-day path builds a DecisionContext (point-in-time cuts of every frame) per day and
runs each analyst on it. Here the ticker's inputs are turned into arrays once — closes,
highs and lows, indicator columns, peer / commodity / rate closes, the text events with
their publication instants — and each day reads slices of them: the bars up to the day
(a binary search), the events published strictly before the day's decision cut-off. The
analysts' ``*_vote`` functions then run on those slices, so every vote equals the per-day
one (tests/council/test_rule_batch.py compares them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from stocker_core.context.decision import NEWS_WINDOW_DAYS, RATE_SYMBOLS, CouncilInputs, current_series
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
from stocker_core.council.roles import ROLE_NAMES

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


def rule_votes(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = ROLE_NAMES
) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
    """Every rule analyst's vote in ``roles`` on each of ``days`` (normalized timestamps)."""
    bars = inputs.bars
    bar_dates = pd.to_datetime(bars["date"]).to_numpy(dtype="datetime64[ns]").astype(np.int64)
    if len(bar_dates) and np.any(np.diff(bar_dates) < 0):
        raise ValueError(f"{inputs.ticker}: bars must be sorted by date")
    close = bars["close"].to_numpy(float)
    high = bars["high"].fillna(bars["close"]).to_numpy(float)
    low = bars["low"].fillna(bars["close"]).to_numpy(float)
    monthly = monthly_returns(close, bars["date"]) if len(bars) else pd.Series(dtype=float)
    indicators = inputs._indicators  # causal, full history (as the per-day path cuts them)
    ind_dates = (
        pd.to_datetime(indicators["date"]).to_numpy(dtype="datetime64[ns]").astype(np.int64)
        if indicators is not None and len(indicators)
        else np.zeros(0, dtype=np.int64)
    )
    ind_columns = (
        {c: indicators[c].to_numpy() for c in indicators.columns if c != "date"}
        if indicators is not None
        else {}
    )
    news = _Events(inputs.text.news, ("headline", "sentiment_label"))
    forums = _Events(inputs.text.forums, ("post_text", "score"))
    macro = _Events(inputs.text.macro, ("headline", "policy_signal"))
    symbols = _symbol_closes(inputs)
    empty = np.zeros(0)

    def closes_of(symbol: str | None, day_ns: int) -> np.ndarray:
        if symbol is None or symbol not in symbols:
            return empty
        dates, values = symbols[symbol]
        return values[dates <= day_ns]

    def current_closes_of(symbol: str | None, day_ns: int) -> np.ndarray:
        if symbol is None or symbol not in symbols:
            return empty
        return current_series(*symbols[symbol], day_ns)

    wanted = set(roles)
    out: dict[tuple[str, pd.Timestamp], SpecialistVote] = {}
    for day in days:
        day = pd.Timestamp(day).normalize()
        day_ns = day.value
        # bars dated on or before the day (point_in_time compares by day)
        end = int(np.searchsorted(bar_dates, day_ns + _DAY_NS, "left"))
        cutoff = decision_cutoff(day)
        cutoff_ns = cutoff.value
        votes: dict[str, SpecialistVote] = {}
        if "chart_pattern" in wanted:
            lo = max(0, end - 60)
            votes["chart_pattern"] = chart_pattern_vote(close[lo:end], high[lo:end], low[lo:end])
        if "seasonal_trend" in wanted:
            votes["seasonal_trend"] = seasonal_trend_vote(close[:end], monthly, day)
        if "indicator" in wanted:
            ind_end = int(np.searchsorted(ind_dates, day_ns + _DAY_NS, "left"))
            if ind_end == 0 or end == 0:
                votes["indicator"] = abstain("indicator", "no indicators")
            else:
                row = {c: values[ind_end - 1] for c, values in ind_columns.items()}
                votes["indicator"] = indicator_vote(row, float(close[end - 1]))
        if "news" in wanted:
            since = (cutoff - pd.Timedelta(days=NEWS_WINDOW_DAYS)).value
            rows = news.visible(cutoff_ns, since)
            votes["news"] = news_vote(
                news.column("headline", rows),
                news.column("sentiment_label", rows),
                news.ages(rows, day_ns),
                inputs.ticker,
                day,
            )
        if "forum_sentiment" in wanted:
            rows = forums.visible(cutoff_ns)
            votes["forum_sentiment"] = forum_sentiment_vote(
                forums.column("post_text", rows), forums.values["score"][rows] if len(rows) else empty,
                forums.ages(rows, day_ns), inputs.ticker, day,
            )  # fmt: skip
        if "peer_commodity" in wanted:
            votes["peer_commodity"] = peer_commodity_vote(
                close[:end],
                {p: current_closes_of(p, day_ns) for p in inputs.peers},
                inputs.commodity,
                current_closes_of(inputs.commodity, day_ns) if inputs.commodity else None,
            )
        if "geopolitics" in wanted:
            rows = macro.visible(cutoff_ns)
            votes["geopolitics"] = geopolitics_vote(
                macro.column("headline", rows),
                macro.column("policy_signal", rows),
                macro.ages(rows, day_ns),
                {s: closes_of(s, day_ns) for s in RATE_SYMBOLS},
                day,
            )
        for role in roles:
            out[(role, day)] = votes[role]
    return out
