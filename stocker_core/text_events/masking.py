"""Masked prompts: what an LLM sees of a stock without learning which stock or when.

A model that knows the ticker and the date may remember what happened next. A
``PromptMask`` renders names, dates and prices for a prompt:

* the ticker and its company names become a neutral label (``the stock``: ``STOCK``;
  peers ``PEER1``, ``PEER2``, …; any other company of ``COMPANY_NAMES`` ``ANOTHER``;
  commodities and rates by kind: ``gold``, ``10y yield``);
* a date becomes a relative session number (``session -3``: three sessions before the
  decision; ``session 0`` is the decision day), a month ``month -2``;
* the stock's prices are rebased to 100 at the episode's first session;
* free text (headlines, posts, macro events) has company names and tickers replaced, and
  calendar dates, years and dollar amounts blanked.

``PromptMask.identity`` renders the same things unmasked, so a prompt builder has one
code path. Pure functions of their inputs: nothing here reads data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from stocker_core.market.indicators import PRICE_LEVEL_COLUMNS, PRICE_SCALE_COLUMNS

__all__ = ["COMPANY_NAMES", "SYMBOL_KINDS", "PromptMask", "company_names", "mask_json"]

COMPANY_NAMES: dict[str, tuple[str, ...]] = {
    "AAPL": ("Apple Inc", "Apple"),
    "AMD": ("Advanced Micro Devices", "AMD"),
    "AMZN": ("Amazon.com", "Amazon"),
    "BAC": ("Bank of America", "BofA"),
    "BBY": ("Best Buy",),
    "CVX": ("Chevron",),
    "GE": ("General Electric",),
    "GOOG": ("Alphabet", "Google"),
    "GOOGL": ("Alphabet", "Google"),
    "HD": ("Home Depot",),
    "INTC": ("Intel",),
    "JNJ": ("Johnson & Johnson", "J&J"),
    "JPM": ("JPMorgan Chase", "JPMorgan", "JP Morgan"),
    "KO": ("Coca-Cola", "Coca Cola", "Coke"),
    "LLY": ("Eli Lilly", "Lilly"),
    "META": ("Meta Platforms", "Meta", "Facebook"),
    "MRK": ("Merck",),
    "MSFT": ("Microsoft",),
    "NVDA": ("NVIDIA", "Nvidia"),
    "PEP": ("PepsiCo", "Pepsi"),
    "PFE": ("Pfizer",),
    "PG": ("Procter & Gamble", "P&G"),
    "RRC": ("Range Resources",),
    "SNAP": ("Snap Inc", "Snapchat", "Snap"),
    "TSLA": ("Tesla",),
    "UNH": ("UnitedHealth",),
    "WMT": ("Walmart", "Wal-Mart"),
    "XOM": ("Exxon Mobil", "ExxonMobil", "Exxon"),
}
"""Company names per ticker, longest first within a ticker (they are replaced in that order)."""

SYMBOL_KINDS: dict[str, str] = {
    "GC=F": "gold",
    "CL=F": "crude oil",
    "SI=F": "silver",
    "^TNX": "10y yield",
    "^IRX": "13w yield",
    "^FVX": "5y yield",
    "^TYX": "30y yield",
    "^GSPC": "the index",
}
"""Neutral names of commodities, rates and the index (they identify no company)."""

_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    "sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE_PATTERNS = (
    re.compile(r"\b\d{4}-\d{1,2}(?:-\d{1,2})?(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
    re.compile(rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b", re.IGNORECASE),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})\.?(?:,?\s+\d{{4}})?\b", re.IGNORECASE),
    re.compile(r"(?<![\d.,])(?:19|20)\d{2}(?![\d.,]\d)"),
)
_DOLLARS = re.compile(
    r"(?:US)?\$\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:billion|million|trillion|bn|tn|[bmkt])\b)?", re.IGNORECASE
)
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
_PRICE_KEYS = frozenset({"last_close", "close", "open", "high", "low", "price"})
_SYMBOL_KEYS = frozenset({"symbol", "ticker"})
_PRICE_COLUMNS = ("open", "high", "low", "close", *PRICE_LEVEL_COLUMNS)
_SCALE_COLUMNS = PRICE_SCALE_COLUMNS


def company_names(ticker: str, extra: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
    """Names a text may call ``ticker`` by (known names, then ``extra``), longest first."""
    names = [*COMPANY_NAMES.get(ticker, ()), *((extra or {}).get(ticker, ()))]
    return tuple(sorted(dict.fromkeys(names), key=len, reverse=True))


def _word(name: str) -> re.Pattern[str]:
    # possessives and plurals keep their ending ("Apple's" -> "STOCK's")
    return re.compile(rf"(?<![\w$^=]){re.escape(name)}(?![\w=])", re.IGNORECASE)


@dataclass(frozen=True)
class PromptMask:
    """How a prompt names the stock, its peers, dates and prices (see the module docstring).

    ``sessions``: the stock's trading days up to the decision (ascending); ``base``: the
    stock's close at the episode's first session (prices are shown as ``100 * p / base``).
    """

    enabled: bool
    ticker: str
    decision: pd.Timestamp
    sessions: pd.DatetimeIndex
    base: float | None
    labels: dict[str, str] = field(default_factory=dict)
    _patterns: tuple[tuple[re.Pattern[str], str], ...] = ()

    @classmethod
    def build(
        cls,
        ticker: str,
        decision: date | pd.Timestamp,
        sessions: Iterable[date | pd.Timestamp],
        closes: Sequence[float],
        start: date | pd.Timestamp | None = None,
        peers: Sequence[str] = (),
        others: Sequence[str] = (),
        *,
        enabled: bool = True,
        names: Mapping[str, Sequence[str]] | None = None,
    ) -> PromptMask:
        """The mask of a decision: ``sessions``/``closes`` are the stock's bars up to the
        decision, ``start`` the episode's start (the close of the first session on or after
        it is the base; default the first session), ``peers`` and ``others`` (commodity,
        rates) the other symbols shown."""
        if not isinstance(sessions, pd.DatetimeIndex):
            sessions = pd.DatetimeIndex(pd.to_datetime(list(sessions)))
        days = sessions.normalize()
        prices = np.asarray(closes, float)
        base = None
        if len(prices):
            first = int(days.searchsorted(pd.Timestamp(start))) if start is not None else 0
            first = min(first, len(prices) - 1)
            base = float(prices[first]) if np.isfinite(prices[first]) and prices[first] > 0 else None
        labels = {ticker: "STOCK"}
        for i, peer in enumerate(p for p in peers if p != ticker):
            labels.setdefault(peer, f"PEER{i + 1}")
        for symbol in others:
            labels.setdefault(symbol, SYMBOL_KINDS.get(symbol, "COMMODITY"))
        patterns: list[tuple[re.Pattern[str], str]] = []
        if enabled:
            for symbol, label in labels.items():
                for name in company_names(symbol, names):
                    patterns.append((_word(name), label))
            strangers = {t: "ANOTHER" for t in COMPANY_NAMES if t not in labels}  # other known companies
            for symbol, label in strangers.items():
                for name in company_names(symbol, names):
                    patterns.append((_word(name), label))
            labels_and_strangers = {**labels, **strangers}
            for (
                symbol,
                label,
            ) in labels_and_strangers.items():  # tickers after names ("AMD" is both), exact case
                patterns.append((re.compile(rf"(?<![\w$^=]){re.escape(symbol)}(?![\w=])"), label))
                if symbol.startswith("^") or "=" in symbol:
                    patterns.append((re.compile(re.escape(symbol)), label))
        return cls(enabled, ticker, pd.Timestamp(decision).normalize(), days, base, labels, tuple(patterns))

    @classmethod
    def identity(cls, ticker: str, decision: date | pd.Timestamp) -> PromptMask:
        """A mask that changes nothing: real names, ISO dates, raw prices."""
        return cls(False, ticker, pd.Timestamp(decision).normalize(), pd.DatetimeIndex([]), None)

    @property
    def tag(self) -> str:
        """Part of a vote's cache key: ``masked`` or ``plain``."""
        return "masked" if self.enabled else "plain"

    def name(self, symbol: str) -> str:
        """The label of a symbol (the symbol itself when unmasked)."""
        if not self.enabled:
            return symbol
        return self.labels.get(symbol) or SYMBOL_KINDS.get(symbol) or "OTHER"

    def day(self, when: date | pd.Timestamp | str) -> str:
        """``session -k`` (k sessions before the decision; a non-trading day counts as the
        session before it) or the ISO date when unmasked."""
        stamp = pd.Timestamp(when)
        if not self.enabled:
            return str(stamp.date())
        stamp = stamp.tz_localize(None) if stamp.tzinfo is not None else stamp
        stamp = stamp.normalize()
        if len(self.sessions):
            at = int(self.sessions.searchsorted(stamp, side="right")) - 1
            last = len(self.sessions) - 1
            if at >= 0:
                return f"session {at - last:+d}" if at != last else "session 0"
        return f"day {(stamp - self.decision).days:+d}"

    def month(self, when: date | pd.Timestamp) -> str:
        """``month -k`` relative to the decision's month, or ``YYYY-MM`` unmasked."""
        stamp = pd.Timestamp(when)
        if not self.enabled:
            return f"{stamp:%Y-%m}"
        k = (stamp.year - self.decision.year) * 12 + stamp.month - self.decision.month
        return f"month {k:+d}" if k else "month 0"

    def price(self, value: float | None) -> str:
        """A stock price: rebased to 100 at the episode start, or raw with 2 decimals."""
        if value is None or not np.isfinite(value):
            return "unknown"
        if not self.enabled:
            return f"{value:.2f}"
        if self.base is None:
            return "unknown"
        return f"{100.0 * value / self.base:.2f}"

    def price_frame(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Price-valued columns rebased (levels to 100 at the start, MACD/ATR by the same
        factor); others unchanged. The frame itself when unmasked."""
        if not self.enabled:
            return frame
        out = frame.copy()
        factor = 100.0 / self.base if self.base else np.nan
        for column in (*_PRICE_COLUMNS, *_SCALE_COLUMNS):
            if column in out.columns:
                out[column] = out[column].astype(float) * factor
        return out

    def text(self, value: object) -> str:
        """Free text with company names and tickers replaced and dates, years and dollar
        amounts blanked (unchanged when unmasked)."""
        text = "" if value is None else str(value)
        if not self.enabled:
            return text
        for pattern, label in self._patterns:
            text = pattern.sub(label, text)
        for pattern in _DATE_PATTERNS:
            text = pattern.sub("[date]", text)
        return _DOLLARS.sub("$[amount]", text)


def mask_json(value: object, mask: PromptMask, key: str | None = None) -> object:
    """A JSON-like tool result seen through ``mask``: ISO date strings become sessions,
    other strings are masked text, stock prices (``close``, ``last_close``, ``high``, …
    and price-valued indicators) are rebased, ``symbol``/``ticker`` become labels.
    Unchanged when the mask is off."""
    if not mask.enabled:
        return value
    if isinstance(value, dict):
        return {k: mask_json(v, mask, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_json(v, mask, key) for v in value]
    if isinstance(value, str):
        if key in _SYMBOL_KEYS:
            return mask.name(value)
        return mask.day(value) if _ISO_DAY.match(value) else mask.text(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or key is None:
        return value
    if key in _PRICE_KEYS or key in _PRICE_COLUMNS or key in _SCALE_COLUMNS:
        if mask.base is None or not np.isfinite(value):
            return None
        return round(100.0 * float(value) / mask.base, 2)
    return value
