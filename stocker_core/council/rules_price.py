"""The price specialists' rules over many days at once: ``chart_pattern``, ``seasonal_trend``
and ``indicator``. The window statistics (maxima, means, standard deviations, the trend
channel) are array operations over all days; each day's vote is then combined from them."""

from __future__ import annotations

import math

import numpy as np

from stocker_core.council.day_arrays import DayGrid, TickerArrays, window_rows
from stocker_core.council.vote_columns import RoleVotes, clip


def _by_width(widths: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(width, positions of the days with that width) for each width present."""
    return [(int(w), np.flatnonzero(widths == w)) for w in np.unique(widths)]


def _channel(a: TickerArrays, ends: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The trend channel of the ``n`` log closes before each end: the least-squares line
    (closed form), its R², the last residual in channel bands, the daily log-return std."""
    y = window_rows(a.log_close, ends, n)
    x = np.arange(n, dtype=float)
    xc = x - x.mean()
    mean = y.mean(axis=1)
    slope = (y - mean[:, None]) @ xc / (xc @ xc)
    resid = y - (slope[:, None] * x + (mean - slope * x.mean())[:, None])
    band = np.maximum(resid.std(axis=1), 1e-9)
    return {
        "slope": slope,
        "r2": 1.0 - resid.var(axis=1) / np.maximum(y.var(axis=1), 1e-12),
        "pos": resid[:, -1] / (2 * band),
        "vol": window_rows(a.log_diff, ends - 1, n - 1).std(axis=1),
    }


def chart_pattern_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """60-day OHLC geometry: breakouts above resistance / below support, trend channel."""
    out = RoleVotes("chart_pattern")
    widths = np.minimum(g.end, 60)
    stats = {k: np.full(len(g), np.nan) for k in ("slope", "r2", "pos", "vol", "resistance", "support")}
    for n, idx in _by_width(widths[widths >= 20]):
        days = np.flatnonzero(widths >= 20)[idx]
        ends = g.end[days]
        for key, values in _channel(a, ends, n).items():
            stats[key][days] = values
        k = min(n, 21) - 1  # the 20 bars before the last (19 with only 20 bars)
        stats["resistance"][days] = window_rows(a.high, ends - 1, k).max(axis=1)
        stats["support"][days] = window_rows(a.low, ends - 1, k).min(axis=1)
    columns = {k: v.tolist() for k, v in stats.items()}
    for i, n in enumerate(widths.tolist()):
        if n < 20:
            out.abstain(f"only {n} bars (need 20 for chart geometry)")
            continue
        last = a.close[g.end[i] - 1]
        resistance, support = columns["resistance"][i], columns["support"][i]
        slope, r2, pos = columns["slope"][i], columns["r2"][i], columns["pos"][i]
        rng = max(resistance - support, 1e-9)
        trend = math.tanh(slope / (columns["vol"][i] or 1e-9) * 5)  # slope in vol units per day
        parts, notes = [], []
        if last > resistance:
            parts.append(0.6 * min(1.0, (last - resistance) / rng * 4 + 0.5))
            notes.append(f"breakout above 20-day resistance {resistance:.2f}")
        elif last < support:
            parts.append(-0.6 * min(1.0, (support - last) / rng * 4 + 0.5))
            notes.append(f"breakdown below 20-day support {support:.2f}")
        else:
            where = (last - support) / rng
            notes.append(f"inside range {support:.2f}-{resistance:.2f} ({where:.0%} of it)")
            parts.append(0.2 * (0.5 - where) * r2)  # near support leans up in a range
        parts.append(0.5 * trend * max(r2, 0.2))
        notes.append(f"60-day channel slope {slope * 252:+.0%}/yr, R2 {r2:.2f}")
        if abs(pos) > 1:
            parts.append(-0.15 * math.copysign(1, pos))
            notes.append("price outside its trend channel")
        broke = len(parts) > 2 or "break" in notes[0]
        confidence = clip(0.25 + 0.5 * r2 * abs(trend) + (0.25 if broke else 0.0), 0, 1)
        out.add(clip(sum(parts)), confidence, "; ".join(notes))
    return out


def _window_stat(values: np.ndarray, ends: np.ndarray, widths: np.ndarray, stat: str) -> np.ndarray:
    """``values[end - width:end].<stat>()`` per day (grouped by width)."""
    out = np.full(len(ends), np.nan)
    for width, idx in _by_width(widths):
        if width > 0:
            out[idx] = getattr(window_rows(values, ends[idx], width), stat)(axis=1)
    return out


def _seasonality(a: TickerArrays, g: DayGrid) -> dict[tuple[int, int], tuple[int, float]]:
    """Per (year, month) of the days: how many earlier years' same month has a return, and their mean."""
    monthly, out = a.monthly, {}
    months = monthly.index.month
    for day in g.days:
        key = (day.year, day.month)
        if key not in out:
            same = monthly[(months == day.month) & (monthly.index < day.replace(day=1))]
            out[key] = (len(same), float(same.mean()) if len(same) else math.nan)
    return out


def seasonal_trend_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """Long-horizon trend (200-day mean / 6-month momentum) and month-of-year history."""
    out = RoleVotes("seasonal_trend")
    long = g.end >= 60
    ends = g.end[long]
    horizon = np.minimum(ends - 1, 126)
    vol = np.full(len(g), np.nan)
    ma = np.full(len(g), np.nan)
    vol[long] = _window_stat(a.log_diff, ends - 1, horizon, "std")
    ma[long] = _window_stat(a.close, ends, np.minimum(ends, 200), "mean")
    seasons = _seasonality(a, g)
    vol_list, ma_list = vol.tolist(), ma.tolist()
    for i, (day, end) in enumerate(zip(g.days, g.end.tolist(), strict=True)):
        if end < 60:
            out.abstain(f"only {end} bars (need 60 for a long-horizon trend)")
            continue
        h = min(end - 1, 126)
        last = a.close[end - 1]
        momentum = last / a.close[end - 1 - h] - 1
        mom_score = math.tanh(momentum / (vol_list[i] * math.sqrt(h) or 1e-9))
        long_ma = ma_list[i]
        trend = 0.6 * mom_score + 0.4 * math.tanh((last / long_ma - 1) * 10)
        notes = [
            f"{h}-day return {momentum:+.1%}",
            f"price {last / long_ma - 1:+.1%} vs {min(200, end)}-day mean",
        ]
        count, mean = seasons[(day.year, day.month)]
        seasonal = 0.0
        if count >= 2:
            seasonal = math.tanh(mean / 0.03)
            notes.append(f"{count} past {day.strftime('%B')}s averaged {mean:+.1%}")
        else:
            notes.append("not enough years for month-of-year seasonality")
        confidence = clip(0.3 + 0.4 * min(1.0, end / 252) * abs(trend) + 0.2 * min(1.0, count / 5), 0, 1)
        out.add(clip(0.8 * trend + 0.2 * seasonal), confidence, "; ".join(notes))
    return out


INDICATOR_COLUMNS = ("rsi14", "macd_hist", "sma20", "sma50", "sma200", "bb_lower", "bb_upper")


def indicator_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """RSI14, MACD histogram, SMA20/50/200 alignment and Bollinger %B of the day's indicator row."""
    out = RoleVotes("indicator")
    rows = np.clip(g.indicator_end - 1, 0, None)
    columns = a.indicator_columns
    values = {
        c: (columns[c][rows].tolist() if c in columns and len(columns[c]) else [math.nan] * len(g))
        for c in INDICATOR_COLUMNS
    }
    prices = a.close[np.clip(g.end - 1, 0, None)].tolist() if len(a.close) else [math.nan] * len(g)
    for i in range(len(g)):
        if g.indicator_end[i] == 0 or g.end[i] == 0:
            out.abstain("no indicators")
            continue
        _indicator_vote(out, {c: v[i] for c, v in values.items()}, prices[i])
    return out


def _known(x: float) -> bool:
    return x == x  # not NaN


def _indicator_vote(out: RoleVotes, row: dict[str, float], price: float) -> None:
    price = price or math.nan
    scores: list[tuple[float, float]] = []  # (score, weight)
    notes: list[str] = []
    rsi = row["rsi14"]
    if _known(rsi):
        if rsi >= 70:
            s = -min(1.0, (rsi - 70) / 15 + 0.4)
        elif rsi <= 30:
            s = min(1.0, (30 - rsi) / 15 + 0.4)
        else:
            s = (rsi - 50) / 100  # mild momentum in the neutral zone
        scores.append((s, 1.5))
        notes.append(f"RSI {rsi:.0f}")
    hist = row["macd_hist"]
    if _known(hist) and _known(price) and price > 0:
        scores.append((math.tanh(hist / price * 200), 1.0))
        notes.append(f"MACD hist {hist:+.2f}")
    above = [price > row[n] for n in ("sma20", "sma50", "sma200") if _known(row[n])]
    if above:
        scores.append(((2 * sum(above) / len(above)) - 1, 1.0))
        notes.append(f"above {sum(above)}/{len(above)} SMAs")
    lower, upper = row["bb_lower"], row["bb_upper"]
    if _known(lower) and _known(upper) and upper > lower:
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
        out.abstain("indicators not yet defined (too little history)")
        return
    signal = clip(sum(s * w for s, w in scores) / sum(w for _, w in scores))
    signs = [math.copysign(1.0, s) for s, _ in scores if abs(s) > 0.05]
    agreement = abs(sum(signs)) / len(signs) if signs else 0.0
    out.add(signal, clip(0.2 + 0.4 * agreement + 0.4 * abs(signal), 0, 1), ", ".join(notes))
