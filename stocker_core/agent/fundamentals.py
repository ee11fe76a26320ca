"""Fundamentals tool: statements, estimates, insider transactions and dividends from yfinance,
only what was public before the decision; offline an honest ``available: false``.

Statements count as published ``FILING_LAG_DAYS`` after their period end (the SEC's
10-Q deadline is 40-45 days, the 10-K's 60-90: annual periods use ``ANNUAL_FILING_LAG_DAYS``).
Earnings estimates are a snapshot of today, so a past decision never sees them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from stocker_core.agent.arguments import MAX_LIST_ITEMS, one_of, rounded

FUNDAMENTAL_KINDS = (
    "income_statement",
    "balance_sheet",
    "cash_flow",
    "earnings_estimates",
    "insider_transactions",
    "dividends",
)
FILING_LAG_DAYS = 45
ANNUAL_FILING_LAG_DAYS = 90
MAX_LINE_ITEMS = 12
OFFLINE = {"available": False, "reason": "no fundamentals offline"}

FundamentalsDownload = Callable[[str, str], Any]
"""``download(ticker, kind)`` -> the yfinance object of that kind (DataFrame or Series)."""

_YFINANCE_ATTRIBUTES = {
    "income_statement": "quarterly_income_stmt",
    "balance_sheet": "quarterly_balance_sheet",
    "cash_flow": "quarterly_cashflow",
    "earnings_estimates": "earnings_estimate",
    "insider_transactions": "insider_transactions",
    "dividends": "dividends",
}


def yfinance_download(ticker: str, kind: str) -> Any:  # pragma: no cover - network
    """The yfinance object of ``kind`` for ``ticker``."""
    import yfinance as yf

    return getattr(yf.Ticker(ticker), _YFINANCE_ATTRIBUTES[kind])


def _statement(frame: pd.DataFrame, day: pd.Timestamp, lag_days: int) -> dict[str, Any]:
    periods = [pd.Timestamp(c) for c in frame.columns]
    public = sorted((p for p in periods if p + pd.Timedelta(days=lag_days) < day), reverse=True)[:4]
    if not public:
        return {"available": False, "reason": "no statement published before the decision date"}
    by_period = {pd.Timestamp(c): c for c in frame.columns}
    items = list(frame.index[:MAX_LINE_ITEMS])
    return {
        "available": True,
        "periods": [p.date().isoformat() for p in public],
        "items": {str(item): [rounded(frame.loc[item, by_period[p]], 0) for p in public] for item in items},
        "truncated": len(frame.index) > MAX_LINE_ITEMS,
        "published_assumption": f"period end + {lag_days} days",
    }


def _dated_rows(frame: pd.DataFrame, column: str, day: pd.Timestamp) -> dict[str, Any]:
    dates = pd.to_datetime(frame[column]).dt.tz_localize(None)
    rows = frame.loc[(dates < day).to_numpy()].assign(_date=dates).sort_values("_date", ascending=False)
    shown = rows.head(MAX_LIST_ITEMS)
    keep = [c for c in ("Insider", "Position", "Transaction", "Text", "Shares", "Value") if c in frame]
    items = []
    for _, row in shown.iterrows():
        item = {"date": row["_date"].date().isoformat()}
        for name in keep:
            value = row[name]
            item[name.lower()] = rounded(value, 0) if isinstance(value, int | float) else str(value)[:80]
        items.append(item)
    return {"available": True, "count": len(rows), "items": items, "truncated": len(rows) > MAX_LIST_ITEMS}


def _dividends(series: pd.Series, day: pd.Timestamp) -> dict[str, Any]:
    index = pd.DatetimeIndex(series.index).tz_localize(None) if len(series) else pd.DatetimeIndex([])
    past = pd.Series(series.to_numpy(), index=index)
    past = past.loc[past.index < day].sort_index(ascending=False)
    shown = past.head(MAX_LIST_ITEMS)
    return {
        "available": True,
        "count": len(past),
        "items": [{"date": d.date().isoformat(), "amount": rounded(v, 4)} for d, v in shown.items()],
        "truncated": len(past) > MAX_LIST_ITEMS,
    }


def point_in_time_fundamentals(raw: Any, kind: str, day: pd.Timestamp) -> dict[str, Any]:
    """What of ``raw`` (the yfinance object of ``kind``) was public before ``day``."""
    if kind == "earnings_estimates":
        if day < pd.Timestamp.now().normalize() - pd.Timedelta(days=1):
            return {"available": False, "reason": "estimates are today's snapshot, not known on that date"}
        return {"available": raw is not None and len(raw) > 0, "table": _table(raw)}
    if raw is None or len(raw) == 0:
        return {"available": False, "reason": f"yfinance has no {kind.replace('_', ' ')}"}
    if kind == "dividends":
        return _dividends(raw, day)
    if kind == "insider_transactions":
        column = "Start Date" if "Start Date" in raw.columns else raw.columns[0]
        return _dated_rows(raw, column, day)
    return _statement(raw, day, FILING_LAG_DAYS)


def _table(raw: Any) -> dict[str, Any]:
    if raw is None or len(raw) == 0:
        return {}
    frame = raw.head(MAX_LIST_ITEMS)
    return {str(i): {str(c): rounded(frame.loc[i, c]) for c in frame.columns[:6]} for i in frame.index}


def fundamentals(
    kind: str,
    ticker: str,
    day: pd.Timestamp,
    online: bool,
    download: FundamentalsDownload | None,
    cache: dict[str, Any],
) -> dict[str, Any]:
    """The ``fundamentals`` tool: ``kind`` for ``ticker`` as public before ``day``.

    Offline (a source other than yfinance) it answers ``available: false`` — never a
    made-up number. Downloads are cached per kind in ``cache``."""
    kind = one_of("kind", kind, FUNDAMENTAL_KINDS)
    if not online:
        return {"kind": kind, **OFFLINE}
    if kind not in cache:
        try:
            cache[kind] = (download or yfinance_download)(ticker, kind)
        except Exception as exc:  # the network or yfinance failed: say so, invent nothing
            return {"kind": kind, "available": False, "reason": f"yfinance fundamentals failed: {exc}"}
    return {"kind": kind, **point_in_time_fundamentals(cache[kind], kind, day)}
