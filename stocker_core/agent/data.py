"""AgentData: one ticker's full-history inputs for the tools, and the point-in-time cut.

Every tool reads through ``AgentData.bars_until`` (bars and indicators dated on or before
the decision day, ``point_in_time``) or ``AgentData.text_until`` (text events published
before the decision's close, ``visible_events``; a date-only event counts as published at
the end of its day, so it is visible from the next session on). Forward returns, which
only the reward may read, come from ``forward_return``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from stocker_core.agent.errors import AgentError, NoForwardReturnError
from stocker_core.config import Settings
from stocker_core.decision_context.point_in_time import point_in_time, visible_events
from stocker_core.errors import StockerError
from stocker_core.language_model.forward_return import forward_return
from stocker_core.market.indicators import compute_indicators
from stocker_core.text_events.events import TextEvents, publication_times
from stocker_core.warehouse.db import Warehouse

TEXT_KINDS = ("news", "forums", "macro")

MACRO_SYMBOLS: dict[str, str] = {
    "^GSPC": "S&P 500 index",
    "^VIX": "CBOE volatility index",
    "^IRX": "13-week Treasury bill yield",
    "^FVX": "5-year Treasury yield",
    "^TNX": "10-year Treasury yield",
    "^TYX": "30-year Treasury yield",
    "CL=F": "WTI crude oil future",
    "HG=F": "copper future",
    "GC=F": "gold future",
}
"""Rate, commodity and index symbols the macro tool may be asked for."""


def with_published_at(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a UTC ``published_at`` (``text_events.events.publication_times``: the stated
    instant, else the end of the event's date in New York, i.e. after that day's close)."""
    stated = (
        frame["published_at"] if "published_at" in frame.columns else pd.Series(pd.NaT, index=frame.index)
    )
    return frame.assign(published_at=publication_times(frame["date"], stated))


def decision_day(value: date | pd.Timestamp | str) -> pd.Timestamp:
    """A decision date as a normalized Timestamp; AgentError for a malformed one."""
    try:
        stamp = pd.Timestamp(value)
    except (ValueError, TypeError):
        raise AgentError(f"invalid date {value!r}: use YYYY-MM-DD, e.g. 2016-03-15") from None
    if pd.isna(stamp):
        raise AgentError(f"invalid date {value!r}: use YYYY-MM-DD, e.g. 2016-03-15")
    return stamp.tz_localize(None).normalize() if stamp.tzinfo else stamp.normalize()


@dataclass
class AgentData:
    """Full-history frames of one ticker: bars (with indicators), text events, macro closes.

    Build it once per ticker and ask ``bars_until`` / ``text_until`` per decision.
    """

    ticker: str
    bars: pd.DataFrame
    text: TextEvents = field(default_factory=TextEvents.empty)
    macro_closes: dict[str, pd.DataFrame] = field(default_factory=dict)
    source: str = ""
    online_fundamentals: bool = False
    fundamentals_download: object | None = None
    """``download(ticker, kind)`` for fundamentals (default yfinance); tests inject a fake."""
    fundamentals_cache: dict = field(default_factory=dict, repr=False)
    """Downloaded fundamentals per kind (one download per ticker and kind)."""
    tool_answers: dict = field(default_factory=dict, repr=False)
    """(day, tool, arguments as JSON) -> (result, valid): a tool answers from the data up to
    its day only, so every policy and episode asking the same question on that day shares it."""

    def __post_init__(self) -> None:
        bars = self.bars.sort_values("date").reset_index(drop=True)
        bars["date"] = pd.to_datetime(bars["date"]).astype("datetime64[ns]")
        indicators = compute_indicators(bars).drop(columns=["date"])
        self.bars = pd.concat([bars, indicators], axis=1)
        self.text = TextEvents(
            *(with_published_at(getattr(self.text.for_ticker(self.ticker), kind)) for kind in TEXT_KINDS)
        )
        self._closes = self.bars["close"].to_numpy(dtype=np.float64)
        self._dates = self.bars["date"].to_numpy()

    def bars_until(self, day: pd.Timestamp) -> pd.DataFrame:
        """Bars and indicators dated on or before ``day``."""
        return point_in_time(self.bars, day)

    def text_until(self, kind: str, day: pd.Timestamp) -> pd.DataFrame:
        """Events of ``kind`` (news, forums, macro) published before ``day``'s close."""
        return visible_events(getattr(self.text, kind), day)

    def macro_until(self, symbol: str, day: pd.Timestamp) -> pd.DataFrame | None:
        """Closes of a macro symbol dated on or before ``day``; None when not loaded."""
        frame = self.macro_closes.get(symbol)
        return None if frame is None else point_in_time(frame, day)

    def trading_days(self, start: date | None = None, end: date | None = None) -> list[pd.Timestamp]:
        """Bar dates with ``start <= date <= end`` (either bound optional)."""
        dates = pd.DatetimeIndex(self._dates)
        mask = np.ones(len(dates), dtype=bool)
        if start is not None:
            mask &= dates >= pd.Timestamp(start)
        if end is not None:
            mask &= dates <= pd.Timestamp(end)
        return list(dates[mask])

    def is_trading_day(self, day: pd.Timestamp) -> bool:
        i = int(np.searchsorted(self._dates, np.datetime64(day), "left"))
        return i < len(self._dates) and pd.Timestamp(self._dates[i]) == day

    def forward_return(self, day: pd.Timestamp, horizon: int) -> float:
        """close[D + horizon sessions] / close[D] - 1 (``language_model.forward_return``) — the reward's
        only look ahead."""
        i = int(np.searchsorted(self._dates, np.datetime64(day), "left"))
        if i >= len(self._dates) or pd.Timestamp(self._dates[i]) != day:
            raise AgentError(f"{day.date()} is not a trading day of {self.ticker}")
        ahead = forward_return(self._closes, i, horizon)
        if ahead is None:
            raise NoForwardReturnError(
                f"{self.ticker} {day.date()}: fewer than {horizon} later sessions to score the decision"
            )
        return ahead

    def forward_day(self, day: pd.Timestamp, horizon: int) -> pd.Timestamp | None:
        """The session ``horizon`` sessions after ``day`` (None past the data)."""
        i = int(np.searchsorted(self._dates, np.datetime64(day), "left"))
        return pd.Timestamp(self._dates[i + horizon]) if i + horizon < len(self._dates) else None


def _text_events(settings: Settings, warehouse: Warehouse | None) -> TextEvents:
    """Text events stored by the text assets; else the text folder's; else none."""
    from stocker_core.text_events.configured import configured_text
    from stocker_core.text_events.store import read_events

    if warehouse is not None and warehouse.path.exists():
        stored = TextEvents(*(read_events(warehouse, kind) for kind in TEXT_KINDS))
        if any(len(frame) for frame in (stored.news, stored.forums, stored.macro)):
            return stored
    return configured_text(settings)


def load_agent_data(
    ticker: str,
    settings: Settings,
    warehouse: Warehouse | None = None,
    end: date | None = None,
    macro_symbols: tuple[str, ...] = tuple(MACRO_SYMBOLS),
) -> AgentData:
    """``ticker``'s bars (warehouse first, else the configured source) up to ``end``
    (exclusive; default: all), stored or folder text events, and every macro symbol the
    source has. Missing macro symbols are left out (the macro tool says so)."""
    from stocker_core.market.bars import load_bars, missing_bars_hint
    from stocker_core.market.validation import validate_ticker

    ticker = validate_ticker(ticker)
    if warehouse is None and settings.warehouse_path.exists():
        warehouse = Warehouse(settings.warehouse_path)
    last = end or date(2100, 1, 1)
    bars, origin = load_bars(settings, ticker, None, last, warehouse)
    if bars.empty:
        hint = missing_bars_hint(settings, "pick another ticker")
        raise AgentError(f"no bars for {ticker} in the warehouse or the {settings.source!r} source; {hint}")
    macro: dict[str, pd.DataFrame] = {}
    for symbol in macro_symbols:
        if symbol == ticker:
            continue
        try:
            frame, _ = load_bars(settings, symbol, None, last, warehouse)
        except StockerError:
            continue
        if len(frame):
            frame = frame[["date", "close"]].sort_values("date").reset_index(drop=True)
            frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
            macro[symbol] = frame
    return AgentData(
        ticker=ticker,
        bars=bars,
        text=_text_events(settings, warehouse),
        macro_closes=macro,
        source=origin,
        online_fundamentals=settings.data_source.online and "fundamentals" in settings.data_source.serves,
    )
