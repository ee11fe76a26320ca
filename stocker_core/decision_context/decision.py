"""DecisionContext: everything a decision on day D may see (a council specialist, the
environment's observation), and nothing after it.

``build_context`` is the only entrance: it takes full-history frames and cuts every
one of them at the decision, which is taken at D's close: bars, indicators and peer,
commodity and rate closes dated on or before D (``point_in_time``); news, forum posts
and macro events published strictly before D's NYSE close (``published_before`` at
``decision_cutoff(D)``: 16:00 New York, 13:00 on early-close days; a date-only event
counts from the next session). News is further limited to the 7 days before the cut-off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from stocker_core.config import Settings
from stocker_core.decision_context.point_in_time import decision_cutoff, point_in_time, published_before
from stocker_core.market.indicators import indicators_by_month
from stocker_core.text_events.events import TextEvents, empty_events

NEWS_WINDOW_DAYS = 7
RATE_SYMBOLS = ("^TNX", "^IRX", "^FVX", "^TYX")


@dataclass(frozen=True)
class PortfolioState:
    """The portfolio the moderator trades from."""

    cash: float = 10_000.0
    position: int = 0
    step: int = 0
    total_steps: int = 0
    last_side: str = "hold"


@dataclass(frozen=True)
class DecisionContext:
    """Point-in-time inputs of the council for ``ticker`` on ``date``."""

    ticker: str
    date: pd.Timestamp
    bars: pd.DataFrame
    indicators: pd.DataFrame
    news: pd.DataFrame
    forums: pd.DataFrame
    macro: pd.DataFrame
    context_closes: pd.DataFrame  # long: date, symbol, close
    peers: tuple[str, ...] = ()
    commodity: str | None = None
    chart_path: Path | None = None
    portfolio: PortfolioState = field(default_factory=PortfolioState)

    @property
    def price(self) -> float | None:
        """The close on the decision date (last bar), or None without bars."""
        return float(self.bars["close"].iloc[-1]) if len(self.bars) else None

    def closes(self, symbol: str) -> pd.Series:
        """Closes of a peer/commodity/rate symbol up to the date, indexed by date."""
        rows = self.context_closes.loc[self.context_closes["symbol"] == symbol]
        return pd.Series(rows["close"].to_numpy(float), index=pd.DatetimeIndex(rows["date"]))

    def current_closes(self, symbol: str) -> pd.Series:
        """``closes(symbol)`` when the symbol has a close on the decision day, else none: past
        a series' last real day its close is missing, not the last one carried forward."""
        closes = self.closes(symbol)
        if len(closes) and closes.index.max().normalize() == self.date:
            return closes
        return closes.iloc[:0]


def current_series(dates_ns: np.ndarray, closes: np.ndarray, day_ns: int) -> np.ndarray:
    """The closes dated on or before the day (``dates_ns``: normalized nanoseconds) when the
    latest of them is the day's own; none otherwise (``current_closes`` on arrays)."""
    keep = dates_ns <= day_ns
    if not keep.any() or dates_ns[keep].max() != day_ns:
        return closes[:0]
    return closes[keep]


def _long_closes(frame: pd.DataFrame | None) -> pd.DataFrame:
    if frame is None or len(frame) == 0:
        return pd.DataFrame(
            {
                "date": pd.Series(dtype="datetime64[ns]"),
                "symbol": pd.Series(dtype=str),
                "close": pd.Series(dtype=float),
            }
        )
    if list(frame.columns) == ["date", "symbol", "close"] and str(frame["date"].dtype) == "datetime64[ns]":
        return frame  # already normalized (CouncilInputs does it once)
    out = frame.rename(columns={"ticker": "symbol"})[["date", "symbol", "close"]].copy()
    out["date"] = pd.to_datetime(out["date"]).astype("datetime64[ns]")
    return out.sort_values(["symbol", "date"]).reset_index(drop=True)


def build_context(
    ticker: str,
    as_of: date | pd.Timestamp | str,
    bars: pd.DataFrame,
    *,
    text: TextEvents | None = None,
    context_closes: pd.DataFrame | None = None,
    peers: Sequence[str] = (),
    commodity: str | None = None,
    indicators: pd.DataFrame | None = None,
    chart_path: Path | str | None = None,
    portfolio: PortfolioState | None = None,
) -> DecisionContext:
    """The context of day ``as_of`` from full-history frames, every one cut at the
    decision (D's close; see the module docstring).

    ``indicators`` (full history) are cut too; when omitted they are computed from the
    cut bars. ``context_closes`` is long (date, symbol|ticker, close).
    """
    day = pd.Timestamp(as_of).normalize()
    past_bars = point_in_time(bars, day).reset_index(drop=True)
    if indicators is None:
        past_ind = indicators_by_month(past_bars)
    else:
        past_ind = point_in_time(indicators, day).reset_index(drop=True)
    text = text or TextEvents.empty()
    cutoff = decision_cutoff(day)
    news = published_before(text.news, cutoff)
    news = news.loc[
        (news["ticker"] == ticker)
        & (pd.to_datetime(news["published_at"], utc=True) >= cutoff - timedelta(days=NEWS_WINDOW_DAYS))
    ]
    forums = published_before(text.forums, cutoff)
    forums = forums.loc[forums["ticker"] == ticker]
    macro = published_before(text.macro, cutoff)
    closes = point_in_time(_long_closes(context_closes), day)
    return DecisionContext(
        ticker=ticker,
        date=day,
        bars=past_bars,
        indicators=past_ind,
        news=news.reset_index(drop=True) if len(news) else empty_events("news"),
        forums=forums.reset_index(drop=True) if len(forums) else empty_events("forums"),
        macro=macro.reset_index(drop=True) if len(macro) else empty_events("macro"),
        context_closes=closes.reset_index(drop=True),
        peers=tuple(peers),
        commodity=commodity,
        chart_path=Path(chart_path) if chart_path else None,
        portfolio=portfolio or PortfolioState(),
    )


@dataclass
class CouncilInputs:
    """Full-history inputs of one ticker; ``context(day)`` cuts them point-in-time."""

    ticker: str
    bars: pd.DataFrame
    text: TextEvents = field(default_factory=TextEvents.empty)
    context_closes: pd.DataFrame | None = None
    peers: tuple[str, ...] = ()
    commodity: str | None = None
    charts: dict[pd.Timestamp, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.text = self.text.for_ticker(self.ticker)
        self.context_closes = _long_closes(self.context_closes)
        self._indicators = indicators_by_month(self.bars) if len(self.bars) else None

    def context(
        self, as_of: date | pd.Timestamp | str, portfolio: PortfolioState | None = None
    ) -> DecisionContext:
        """The point-in-time context of ``as_of`` (indicators are causal, so full-history
        values cut at ``as_of`` equal values computed from the cut bars)."""
        day = pd.Timestamp(as_of).normalize()
        return build_context(
            self.ticker,
            day,
            self.bars,
            text=self.text,
            context_closes=self.context_closes,
            peers=self.peers,
            commodity=self.commodity,
            indicators=self._indicators,
            chart_path=self.charts.get(day),
            portfolio=portfolio,
        )

    def trading_days(self, start: date | str, end: date | str) -> list[pd.Timestamp]:
        """Bar dates with ``start <= date <= end``."""
        dates = pd.to_datetime(self.bars["date"])
        mask = (dates >= pd.Timestamp(start)) & (dates <= pd.Timestamp(end))
        return [pd.Timestamp(d) for d in dates[mask]]


def _load_bars(ticker: str, start: date, end: date, settings: Settings) -> pd.DataFrame:
    from stocker_core.market.bars import load_bars

    return load_bars(settings, ticker, start, end)[0]


def load_council_inputs(
    ticker: str,
    start: date | str,
    end: date | str,
    peers: Sequence[str] = (),
    commodity: str | None = None,
    settings: Settings | None = None,
    text_folder: Path | str | None = None,
    history_days: int = 400,
    text: TextEvents | None = None,
) -> CouncilInputs:
    """Full inputs of ``ticker`` for decisions on ``start..end``: bars with
    ``history_days`` of history (warehouse if it has them, else the configured source),
    peer/commodity/rate closes where available, and text events from ``text_folder``
    (default: ``configured_text`` — the synthetic market's, else STOCKER_TEXT_DIR, else
    STOCKER_FILES_DIR; none when neither is set) unless ``text`` is given (e.g. read
    from the warehouse's text tables)."""
    from stocker_core.config import get_settings
    from stocker_core.errors import StockerError
    from stocker_core.text_events.configured import configured_text
    from stocker_core.text_events.events import load_text_folder

    settings = settings or get_settings(fresh=True)
    first = pd.Timestamp(start).date() - timedelta(days=history_days)
    last = pd.Timestamp(end).date() + timedelta(days=1)
    bars = _load_bars(ticker, first, last, settings)
    closes = []
    for symbol in (*peers, *([commodity] if commodity else []), *RATE_SYMBOLS):
        try:
            frame = _load_bars(symbol, first, last, settings)
        except StockerError:
            continue  # a missing peer or rate symbol leaves that analyst abstaining
        if len(frame):
            closes.append(frame[["date", "close"]].assign(symbol=symbol))
    if text is None and text_folder is not None:
        text = load_text_folder(text_folder)
    elif text is None:
        text = configured_text(settings)
    return CouncilInputs(
        ticker, bars, text, pd.concat(closes, ignore_index=True) if closes else None, tuple(peers), commodity
    )
