"""Rule analysts: deterministic quant logic per role, offline.

Each takes a DecisionContext and returns a SpecialistVote. Missing data gives
signal 0, confidence 0 and a rationale that says what was missing.

Every analyst is a thin reader of the context around a ``*_vote`` function on plain
arrays; ``council/rule_batch.py`` calls the same functions on slices of a ticker's
precomputed arrays, so the batched votes over many days equal these per-day ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from stocker_core.context.decision import RATE_SYMBOLS, DecisionContext
from stocker_core.council.day_arrays import monthly_returns
from stocker_core.council.models import SpecialistVote
from stocker_core.council.registry import SpecialistMap, specialist
from stocker_core.text.events import POLICY_VALENCE
from stocker_core.text.sentiment import score_text, weighted_sentiment

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


RULE_ANALYSTS: Mapping[str, Callable[[DecisionContext], SpecialistVote]] = SpecialistMap(lambda s: s.rule)
"""Every registered specialist's rule analyst in council order, read live from the registry
(``council/registry.py``; the built-in ones are declared in ``council/specialists.py``)."""
RULES_VERSION = "rules-v1"
RULE_REVISIONS: Mapping[str, int] = SpecialistMap(
    lambda s: s.rule_revision, keep=lambda s: s.rule_revision > 0
)
"""Roles whose rule changed since ``RULES_VERSION`` (``Specialist.rule_revision``; their cached
votes are recomputed)."""


def rule_vote(role: str, ctx: DecisionContext) -> SpecialistVote:
    """The rule analyst's vote of ``role``."""
    return specialist(role).rule(ctx)
