"""The cross-asset rules over many days at once: ``peer_commodity`` (20-day relative
strength against peers, the commodity's move) and the rate moves ``geopolitics`` reads.
The 20-day returns of every series are array gathers; each day's vote is combined from them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from stocker_core.council.day_arrays import DayGrid, TickerArrays, trailing_return
from stocker_core.council.vote_columns import RoleVotes, clip
from stocker_core.decision_context.decision import RATE_SYMBOLS

COMMODITY_SENSITIVITY = {"GC=F": -0.5, "CL=F": -0.4}  # gold/oil up = risk-off for equities


def _current_returns(a: TickerArrays, symbol: str, g: DayGrid) -> tuple[list[float | None], list[bool]]:
    """Per day: the symbol's 20-day return when it has the day's close (None when it has
    fewer than 6 closes), and whether the day's close is missing."""
    series = a.symbols.get(symbol)
    if series is None:
        return [None] * len(g), [True] * len(g)
    count = series.count(g.day_ns)
    ret, ok = _returns(series.values, series.valid, count)
    current = series.current(g.day_ns)
    return [r if c else None for r, c in zip(ret, current.tolist(), strict=True)], (~current).tolist()


def _returns(
    values: np.ndarray, valid: np.ndarray, count: np.ndarray
) -> tuple[list[float | None], list[bool]]:
    """Per cut ``values[:count]``: the 20-day return (None with fewer than 6 closes) and whether defined."""
    ret, ok = trailing_return(values, valid, count)
    return [r if k else None for r, k in zip(ret.tolist(), ok.tolist(), strict=True)], ok.tolist()


def rate_moves(a: TickerArrays, g: DayGrid) -> list[dict[str, float]]:
    """Per day, the 20-day moves of the rate symbols with closes up to the day."""
    columns = {}
    for symbol in RATE_SYMBOLS:
        series = a.symbols.get(symbol)
        if series is not None:
            columns[symbol] = _returns(series.values, series.valid, series.count(g.day_ns))[0]
    return [{s: r[i] for s, r in columns.items() if r[i] is not None} for i in range(len(g))]


def _no_close_note(symbols: Sequence[str]) -> str:
    """``; no close on the day: A, B`` for the symbols missing that day (empty when none)."""
    return f"; no close on the day: {', '.join(symbols)}" if symbols else ""


def peer_commodity_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """20-day relative strength vs peers, and the commodity's move (a series without the
    day's close is missing that day)."""
    out = RoleVotes("peer_commodity")
    own = _returns(a.close, a.valid_close, g.end)[0]
    peers = {p: _current_returns(a, p, g) for p in dict.fromkeys(a.peers)}
    commodity = a.commodity
    commodity_ret, commodity_absent = _current_returns(a, commodity, g) if commodity else (None, None)
    beta = COMMODITY_SENSITIVITY.get(commodity or "", -0.3)
    for i in range(len(g)):
        peer_rets = {p: r[i] for p, (r, _) in peers.items() if r[i] is not None}
        absent = [p for p, (_, missing) in peers.items() if missing[i]]
        c_ret = commodity_ret[i] if commodity else None
        if commodity and commodity_absent[i]:
            absent.append(commodity)
        if own[i] is None or (not peer_rets and c_ret is None):
            out.abstain("no peer or commodity closes up to the date" + _no_close_note(absent))
            continue
        parts, notes, weight = [], [], 0.0
        if peer_rets:
            peer_mean = float(np.mean(list(peer_rets.values())))
            parts.append(0.7 * math.tanh((own[i] - peer_mean) / 0.05))
            parts.append(0.3 * math.tanh(peer_mean / 0.08))  # sector tide
            weight += 0.7
            notes.append(
                f"20-day return {own[i]:+.1%} vs peers {peer_mean:+.1%} ({', '.join(sorted(peer_rets))})"
            )
        if c_ret is not None:
            parts.append(beta * math.tanh(c_ret / 0.05))
            weight += 0.3
            notes.append(f"{commodity} {c_ret:+.1%} over 20 days")
        signal = clip(sum(parts))
        confidence = clip(0.2 + 0.4 * weight * min(1.0, 0.3 + abs(signal)), 0, 1)
        out.add(signal, confidence, "; ".join(notes) + _no_close_note(absent))
    return out
