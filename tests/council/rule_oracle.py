"""The rule council as it was before the array rules (frozen): the per-day analysts on a
DecisionContext (``ORACLE_RULES``) and the old batched path that ran them on per-day slices of
a ticker's arrays (``old_rule_votes``).

The test oracle of ``tests/council/test_rule_arrays.py`` and the reference that
``bench/bench_council.py`` measures in the same run; no product path imports it. Copied
verbatim from stocker_core/council/{analysts,day_arrays,rule_batch}.py at f21aed9.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cached_property

import numpy as np
import pandas as pd

from stocker_core.council.models import SpecialistVote
from stocker_core.decision_context.decision import (
    NEWS_WINDOW_DAYS,
    RATE_SYMBOLS,
    CouncilInputs,
    DecisionContext,
    current_series,
)
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.text_events.events import POLICY_VALENCE
from stocker_core.text_events.sentiment import score_text, weighted_sentiment

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


LABEL_VALENCE = {"positive": 1.0, "negative": -1.0, "neutral": 0.0}


def _vote(role: str, signal: float, confidence: float, rationale: str) -> SpecialistVote:
    return SpecialistVote(
        role=role, signal=round(float(signal), 4), confidence=round(float(confidence), 4), rationale=rationale
    )


def abstain(role: str, what: str) -> SpecialistVote:
    """The vote of an analyst that has no data: signal 0, confidence 0, saying what was missing."""
    return SpecialistVote.neutral(role, f"no data: {what}; abstaining (signal 0, confidence 0)")


_missing = abstain


def _clip(x: float, low: float = -1.0, high: float = 1.0) -> float:
    return float(min(high, max(low, x))) if math.isfinite(x) else 0.0


def chart_pattern(ctx: DecisionContext) -> SpecialistVote:
    """60-day OHLC geometry: breakouts above resistance / below support, trend channel."""
    bars = ctx.bars.tail(60)
    close = bars["close"].to_numpy(float)
    high = bars["high"].fillna(bars["close"]).to_numpy(float)
    low = bars["low"].fillna(bars["close"]).to_numpy(float)
    return chart_pattern_vote(close, high, low)


def chart_pattern_vote(close: np.ndarray, high: np.ndarray, low: np.ndarray) -> SpecialistVote:
    """``chart_pattern`` on the last (up to) 60 bars; high/low NaNs already filled by close."""
    role = "chart_pattern"
    if len(close) < 20:
        return _missing(role, f"only {len(close)} bars (need 20 for chart geometry)")
    last = close[-1]
    resistance = float(high[-21:-1].max())
    support = float(low[-21:-1].min())
    rng = max(resistance - support, 1e-9)
    # trend channel: regression of log close on time
    y = np.log(close)
    x = np.arange(len(y), dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    fitted = slope * x + intercept
    resid = y - fitted
    r2 = 1.0 - resid.var() / max(y.var(), 1e-12)
    band = max(resid.std(), 1e-9)
    pos_in_channel = resid[-1] / (2 * band)  # ~[-1, 1] within the channel
    daily_vol = float(np.std(np.diff(y))) or 1e-9
    trend = math.tanh(slope / daily_vol * 5)  # slope in vol units per day
    parts, notes = [], []
    if last > resistance:
        strength = min(1.0, (last - resistance) / rng * 4 + 0.5)
        parts.append(0.6 * strength)
        notes.append(f"breakout above 20-day resistance {resistance:.2f}")
    elif last < support:
        strength = min(1.0, (support - last) / rng * 4 + 0.5)
        parts.append(-0.6 * strength)
        notes.append(f"breakdown below 20-day support {support:.2f}")
    else:
        where = (last - support) / rng
        notes.append(f"inside range {support:.2f}-{resistance:.2f} ({where:.0%} of it)")
        parts.append(0.2 * (0.5 - where) * r2)  # near support leans up in a range
    parts.append(0.5 * trend * max(r2, 0.2))
    notes.append(f"60-day channel slope {slope * 252:+.0%}/yr, R2 {r2:.2f}")
    if abs(pos_in_channel) > 1:
        parts.append(-0.15 * math.copysign(1, pos_in_channel))
        notes.append("price outside its trend channel")
    signal = _clip(sum(parts))
    confidence = _clip(
        0.25 + 0.5 * r2 * abs(trend) + (0.25 if len(parts) > 2 or "break" in notes[0] else 0.0), 0, 1
    )
    return _vote(role, signal, confidence, "; ".join(notes))


def seasonal_trend(ctx: DecisionContext) -> SpecialistVote:
    """Long-horizon trend (SMA200 / 6-month momentum) and month-of-year history."""
    role = "seasonal_trend"
    bars = ctx.bars
    if len(bars) < 60:
        return _missing(role, f"only {len(bars)} bars (need 60 for a long-horizon trend)")
    close = bars["close"].to_numpy(float)
    dates = pd.to_datetime(bars["date"])
    return seasonal_trend_vote(close, monthly_returns(close, dates), ctx.date)


def seasonal_trend_vote(close: np.ndarray, monthly: pd.Series, day: pd.Timestamp) -> SpecialistVote:
    """``seasonal_trend`` from the closes up to ``day`` and month-end returns (only months
    before ``day``'s are read, so a longer series gives the same vote)."""
    role = "seasonal_trend"
    if len(close) < 60:
        return _missing(role, f"only {len(close)} bars (need 60 for a long-horizon trend)")
    horizon = min(len(close) - 1, 126)
    momentum = close[-1] / close[-1 - horizon] - 1
    vol = float(np.std(np.diff(np.log(close[-horizon - 1 :])))) * math.sqrt(horizon) or 1e-9
    mom_score = math.tanh(momentum / vol)
    long_ma = close[-200:].mean()
    ma_score = math.tanh((close[-1] / long_ma - 1) * 10)
    notes = [
        f"{horizon}-day return {momentum:+.1%}",
        f"price {close[-1] / long_ma - 1:+.1%} vs {min(200, len(close))}-day mean",
    ]
    trend = 0.6 * mom_score + 0.4 * ma_score
    # month-of-year: mean return of this calendar month in earlier years
    month = day.month
    same = monthly[(monthly.index.month == month) & (monthly.index < day.replace(day=1))]
    seasonal = 0.0
    if len(same) >= 2:
        seasonal = math.tanh(float(same.mean()) / 0.03)
        notes.append(f"{len(same)} past {day.strftime('%B')}s averaged {same.mean():+.1%}")
    else:
        notes.append("not enough years for month-of-year seasonality")
    signal = _clip(0.8 * trend + 0.2 * seasonal)
    confidence = _clip(
        0.3 + 0.4 * min(1.0, len(close) / 252) * abs(trend) + 0.2 * min(1.0, len(same) / 5), 0, 1
    )
    return _vote(role, signal, confidence, "; ".join(notes))


def indicator(ctx: DecisionContext) -> SpecialistVote:
    """RSI14, MACD histogram, SMA20/50/200 alignment and Bollinger %B."""
    if len(ctx.indicators) == 0 or len(ctx.bars) == 0:
        return _missing("indicator", "no indicators")
    return indicator_vote(ctx.indicators.iloc[-1], ctx.price)


def indicator_vote(row: Mapping[str, float], price: float | None) -> SpecialistVote:
    """``indicator`` from the last indicator row up to the day and the day's close."""
    role = "indicator"
    price = price or float("nan")
    scores: list[tuple[float, float]] = []  # (score, weight)
    notes: list[str] = []
    rsi = row.get("rsi14", np.nan)
    if pd.notna(rsi):
        if rsi >= 70:
            s = -min(1.0, (rsi - 70) / 15 + 0.4)
        elif rsi <= 30:
            s = min(1.0, (30 - rsi) / 15 + 0.4)
        else:
            s = (rsi - 50) / 100  # mild momentum in the neutral zone
        scores.append((s, 1.5))
        notes.append(f"RSI {rsi:.0f}")
    hist = row.get("macd_hist", np.nan)
    if pd.notna(hist) and pd.notna(price) and price > 0:
        scores.append((math.tanh(hist / price * 200), 1.0))
        notes.append(f"MACD hist {hist:+.2f}")
    smas = [(n, row.get(n, np.nan)) for n in ("sma20", "sma50", "sma200")]
    above = [price > v for _, v in smas if pd.notna(v)]
    if above:
        scores.append(((2 * sum(above) / len(above)) - 1, 1.0))
        notes.append(f"above {sum(above)}/{len(above)} SMAs")
    lower, upper = row.get("bb_lower", np.nan), row.get("bb_upper", np.nan)
    if pd.notna(lower) and pd.notna(upper) and upper > lower:
        pct_b = (price - lower) / (upper - lower)
        if pct_b > 1:
            s = -min(1.0, 0.6 + (pct_b - 1) * 2)
        elif pct_b < 0:
            s = min(1.0, 0.6 - pct_b * 2)
        else:
            s = 0.0
        scores.append((s, 1.5))
        notes.append(f"Bollinger %B {pct_b:.2f}")
    if not scores:
        return _missing(role, "indicators not yet defined (too little history)")
    total = sum(w for _, w in scores)
    signal = _clip(sum(s * w for s, w in scores) / total)
    signs = [np.sign(s) for s, _ in scores if abs(s) > 0.05]
    agreement = abs(sum(signs)) / len(signs) if signs else 0.0
    confidence = _clip(0.2 + 0.4 * agreement + 0.4 * abs(signal), 0, 1)
    return _vote(role, signal, confidence, ", ".join(notes))


def _recency(ages_days: np.ndarray, half_life: float) -> np.ndarray:
    return np.power(0.5, np.asarray(ages_days, dtype=float) / half_life)


def news(ctx: DecisionContext) -> SpecialistVote:
    """Headline sentiment (finance lexicon, blended with labels) weighted by recency."""
    items = ctx.news
    return news_vote(
        list(items["headline"]), list(items["sentiment_label"]), _ages(ctx.date, items), ctx.ticker, ctx.date
    )


def _ages(day: pd.Timestamp, events: pd.DataFrame) -> np.ndarray:
    """Whole days from each event's ``date`` to ``day``."""
    return (day - pd.to_datetime(events["date"])).dt.days.to_numpy(float)


def news_vote(
    headlines: Sequence[str], labels: Sequence[object], ages: np.ndarray, ticker: str, day: pd.Timestamp
) -> SpecialistVote:
    """``news`` from the visible headlines of the last 7 days (oldest first) and their ages."""
    role = "news"
    if len(headlines) == 0:
        return _missing(role, f"no {ticker} headlines in the 7 days up to {day.date()}")
    scores = []
    for headline, label in zip(headlines, labels, strict=True):
        s = score_text(headline)
        if isinstance(label, str) and label in LABEL_VALENCE:
            s = 0.5 * s + 0.5 * LABEL_VALENCE[label]
        scores.append(s)
    weights = _recency(ages, half_life=3.0)
    mean, agreement = weighted_sentiment(scores, list(weights))
    latest = headlines[-1]
    confidence = _clip(
        min(1.0, 0.3 + 0.15 * len(headlines)) * (0.4 + 0.6 * agreement) * min(1.0, 0.3 + abs(mean)), 0, 1
    )
    return _vote(
        role,
        _clip(mean * 1.3),
        confidence,
        f"{len(headlines)} headlines, weighted sentiment {mean:+.2f}; latest: {latest!r}",
    )


def forum_sentiment(ctx: DecisionContext) -> SpecialistVote:
    """Forum posts up to the date, weighted by recency (half-life 7 days) and score."""
    posts = ctx.forums
    ages = _ages(ctx.date, posts) if len(posts) else np.zeros(0)
    return forum_sentiment_vote(
        list(posts["post_text"]) if len(posts) else [],
        posts["score"].to_numpy(float) if len(posts) else np.zeros(0),
        ages,
        ctx.ticker,
        ctx.date,
    )


def forum_sentiment_vote(
    texts: Sequence[str], post_scores: np.ndarray, ages: np.ndarray, ticker: str, day: pd.Timestamp
) -> SpecialistVote:
    """``forum_sentiment`` from the visible posts (their texts, scores and ages in days)."""
    role = "forum_sentiment"
    recent = np.asarray(ages, dtype=float) <= 30
    texts = [t for t, keep in zip(texts, recent, strict=True) if keep]
    if len(texts) == 0:
        return _missing(role, f"no {ticker} forum posts in the 30 days up to {day.date()}")
    ages, post_scores = np.asarray(ages, dtype=float)[recent], np.asarray(post_scores, dtype=float)[recent]
    weights = _recency(ages, 7.0) * np.log1p(np.clip(post_scores, 0, None) + 1)
    scores = [score_text(t) for t in texts]
    mean, agreement = weighted_sentiment(scores, list(weights))
    confidence = _clip(
        min(1.0, 0.2 + 0.1 * len(texts)) * (0.4 + 0.6 * agreement) * min(1.0, 0.3 + abs(mean)) * 0.8, 0, 1
    )
    return _vote(
        role,
        _clip(mean * 1.2),
        confidence,
        f"{len(texts)} posts in 30 days, score-weighted sentiment {mean:+.2f}",
    )


def _ret(series: pd.Series | np.ndarray, days: int) -> float | None:
    values = np.asarray(series, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) < 6:
        return None
    n = min(days, len(values) - 1)
    return float(values[-1] / values[-1 - n] - 1)


COMMODITY_SENSITIVITY = {"GC=F": -0.5, "CL=F": -0.4}  # gold/oil up = risk-off for equities


def peer_commodity(ctx: DecisionContext) -> SpecialistVote:
    """20-day relative strength vs peers, and the commodity's move (a series without the
    day's close is missing that day: ``DecisionContext.current_closes``)."""
    return peer_commodity_vote(
        ctx.bars["close"].to_numpy(float),
        {p: ctx.current_closes(p).to_numpy(float) for p in ctx.peers},
        ctx.commodity,
        ctx.current_closes(ctx.commodity).to_numpy(float) if ctx.commodity else None,
    )


def peer_commodity_vote(
    own: np.ndarray,
    peers: Mapping[str, np.ndarray],
    commodity: str | None,
    commodity_closes: np.ndarray | None,
) -> SpecialistVote:
    """``peer_commodity`` from the closes up to the day of the ticker, its peers (in order)
    and its commodity; an empty series (no close on the day) is named as missing."""
    role = "peer_commodity"
    own_ret = _ret(own, 20)
    peer_rets = {p: r for p, closes in peers.items() if (r := _ret(closes, 20)) is not None}
    commodity_ret = _ret(commodity_closes, 20) if commodity else None
    absent = [p for p, closes in peers.items() if len(closes) == 0]
    if commodity and (commodity_closes is None or len(commodity_closes) == 0):
        absent.append(commodity)
    if own_ret is None or (not peer_rets and commodity_ret is None):
        return _missing(role, "no peer or commodity closes up to the date" + _no_close_note(absent))
    parts, notes, weight = [], [], 0.0
    if peer_rets:
        peer_mean = float(np.mean(list(peer_rets.values())))
        rel = own_ret - peer_mean
        parts.append(0.7 * math.tanh(rel / 0.05))
        parts.append(0.3 * math.tanh(peer_mean / 0.08))  # sector tide
        weight += 0.7
        notes.append(
            f"20-day return {own_ret:+.1%} vs peers {peer_mean:+.1%} ({', '.join(sorted(peer_rets))})"
        )
    if commodity_ret is not None:
        beta = COMMODITY_SENSITIVITY.get(commodity or "", -0.3)
        parts.append(beta * math.tanh(commodity_ret / 0.05))
        weight += 0.3
        notes.append(f"{commodity} {commodity_ret:+.1%} over 20 days")
    signal = _clip(sum(parts))
    return _vote(
        role,
        signal,
        _clip(0.2 + 0.4 * weight * min(1.0, 0.3 + abs(signal)), 0, 1),
        "; ".join(notes) + _no_close_note(absent),
    )


def _no_close_note(symbols: Sequence[str]) -> str:
    """``; no close on the day: A, B`` for the symbols missing that day (empty when none)."""
    return f"; no close on the day: {', '.join(symbols)}" if symbols else ""


def geopolitics(ctx: DecisionContext) -> SpecialistVote:
    """Dated macro events (hawkish/dovish, half-life 10 days) and rate moves when present."""
    macro = ctx.macro
    return geopolitics_vote(
        list(macro["headline"]) if len(macro) else [],
        list(macro["policy_signal"]) if len(macro) else [],
        _ages(ctx.date, macro) if len(macro) else np.zeros(0),
        {s: ctx.closes(s).to_numpy(float) for s in RATE_SYMBOLS},
        ctx.date,
    )


def geopolitics_vote(
    headlines: Sequence[str],
    policy_signals: Sequence[object],
    ages: np.ndarray,
    rates: Mapping[str, np.ndarray],
    day: pd.Timestamp,
) -> SpecialistVote:
    """``geopolitics`` from the visible macro events (oldest first, with their ages in days)
    and the closes up to the day of the rate symbols."""
    role = "geopolitics"
    recent = np.asarray(ages, dtype=float) <= 45
    headlines = [h for h, keep in zip(headlines, recent, strict=True) if keep]
    policy_signals = [p for p, keep in zip(policy_signals, recent, strict=True) if keep]
    ages = np.asarray(ages, dtype=float)[recent]
    rate_moves = {s: r for s in RATE_SYMBOLS if (r := _ret(rates.get(s, np.zeros(0)), 20)) is not None}
    if len(headlines) == 0 and not rate_moves:
        return _missing(role, f"no macro events in the 45 days up to {day.date()} and no rate symbols")
    parts, notes, conf = [], [], 0.2
    if len(headlines):
        weights = _recency(ages, 10.0)
        scores = []
        for headline, sig in zip(headlines, policy_signals, strict=True):
            if isinstance(sig, str) and sig in POLICY_VALENCE:
                scores.append(0.7 * POLICY_VALENCE[sig] + 0.3 * score_text(headline))
            else:
                scores.append(score_text(headline))
        mean, agreement = weighted_sentiment(scores, list(weights))
        parts.append(0.6 * mean)
        conf += 0.4 * agreement * min(1.0, float(weights.sum()))
        notes.append(
            f"{len(headlines)} macro events, recency-weighted stance {mean:+.2f}; latest: {headlines[-1]!r}"
        )
    if rate_moves:
        avg = float(np.mean(list(rate_moves.values())))
        parts.append(-0.4 * math.tanh(avg / 0.05))  # rising yields weigh on equities
        conf += 0.2
        notes.append(f"rates {avg:+.1%} over 20 days ({', '.join(sorted(rate_moves))})")
    return _vote(role, _clip(sum(parts)), _clip(conf * 0.8, 0, 1), "; ".join(notes))


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
    ind_end = int(np.searchsorted(a.indicator_dates, d.day_ns + DAY_NS, "left"))
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
        forums.values["score"][rows] if len(rows) else EMPTY,
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


ORACLE_RULES = {
    "chart_pattern": chart_pattern,
    "seasonal_trend": seasonal_trend,
    "indicator": indicator,
    "news": news,
    "forum_sentiment": forum_sentiment,
    "peer_commodity": peer_commodity,
    "geopolitics": geopolitics,
}
"""The seven built-in rule analysts on a day's context, in the council's order."""

_OLD_BATCH = {
    "chart_pattern": chart_pattern_batch,
    "seasonal_trend": seasonal_trend_batch,
    "indicator": indicator_batch,
    "news": news_batch,
    "forum_sentiment": forum_sentiment_batch,
    "peer_commodity": peer_commodity_batch,
    "geopolitics": geopolitics_batch,
}


def oracle_votes(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = tuple(ORACLE_RULES)
) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
    """The old per-day path: a context per day, each analyst on it."""
    out = {}
    for day in days:
        ctx = inputs.context(day)
        for role in roles:
            out[(role, ctx.date)] = ORACLE_RULES[role](ctx)
    return out


def old_rule_votes(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = tuple(ORACLE_RULES)
) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
    """The old batched path: arrays once, each analyst on per-day slices of them."""
    arrays = TickerArrays(inputs)
    out = {}
    for day in days:
        d = arrays.day(day)
        for role in roles:
            out[(role, d.day)] = _OLD_BATCH[role](d)
    return out
