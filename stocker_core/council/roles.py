"""The seven specialist roles: system prompt, message builder, prompt version."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stocker_core.context.decision import RATE_SYMBOLS, DecisionContext

OUTPUT_RULES = (
    'Answer with one JSON object and nothing else: {"signal": <float in [-1, 1], '
    '-1 strong sell, +1 strong buy>, "confidence": <float in [0, 1]>, "rationale": '
    '"<one or two sentences>"}. You only see data up to the decision date; never assume '
    "anything later. If your data is missing, answer signal 0 and confidence 0."
)
BUILDER_VERSION = "builders-v1"


@dataclass(frozen=True)
class RoleMessage:
    """The user message of a role and, for the chart role, the chart image."""

    text: str
    image_path: Path | None = None


@dataclass(frozen=True)
class Role:
    """A specialist: name, system prompt, message builder and prompt version."""

    name: str
    system_prompt: str
    build: Callable[[DecisionContext], RoleMessage]

    @property
    def prompt_version(self) -> str:
        """Hash of the prompt text and builder version: changing either invalidates votes."""
        digest = hashlib.sha256(f"{self.system_prompt}\n{BUILDER_VERSION}".encode())
        return digest.hexdigest()[:12]


def _header(ctx: DecisionContext) -> str:
    price = f"{ctx.price:.2f}" if ctx.price is not None else "unknown"
    return f"Ticker {ctx.ticker}, decision date {ctx.date.date()}, last close {price}."


def _closes_table(ctx: DecisionContext, days: int) -> str:
    tail = ctx.bars.tail(days)
    if tail.empty:
        return "No price bars."
    rows = [
        f"{pd.Timestamp(d).date()} O{o:.2f} H{h:.2f} L{lo:.2f} C{c:.2f}"
        for d, o, h, lo, c in tail[["date", "open", "high", "low", "close"]].itertuples(index=False)
    ]
    return "\n".join(rows)


def _chart(ctx: DecisionContext) -> RoleMessage:
    text = f"{_header(ctx)}\nThe last 60 trading days as OHLC (oldest first):\n{_closes_table(ctx, 60)}"
    return RoleMessage(text, ctx.chart_path if ctx.chart_path and ctx.chart_path.exists() else None)


def _seasonal(ctx: DecisionContext) -> RoleMessage:
    bars = ctx.bars
    if bars.empty:
        return RoleMessage(f"{_header(ctx)}\nNo price history.")
    monthly = (
        pd.Series(bars["close"].to_numpy(float), index=pd.DatetimeIndex(bars["date"])).resample("ME").last()
    )
    lines = [f"{d:%Y-%m} {c:.2f}" for d, c in monthly.items()]
    return RoleMessage(
        f"{_header(ctx)}\nMonth-end closes ({len(bars)} days of history):\n" + "\n".join(lines)
    )


def _indicator(ctx: DecisionContext) -> RoleMessage:
    if ctx.indicators.empty:
        return RoleMessage(f"{_header(ctx)}\nNo indicators.")
    tail = ctx.indicators.tail(5).drop(columns=["date"]).round(3)
    tail.index = [str(pd.Timestamp(d).date()) for d in ctx.indicators.tail(5)["date"]]
    return RoleMessage(f"{_header(ctx)}\nIndicators for the last 5 sessions:\n{tail.to_string()}")


def _news(ctx: DecisionContext) -> RoleMessage:
    if ctx.news.empty:
        return RoleMessage(f"{_header(ctx)}\nNo headlines in the 7 days up to the date.")
    lines = [
        f"{pd.Timestamp(d).date()} [{s}] {h}"
        for d, s, h in ctx.news[["date", "source", "headline"]].itertuples(index=False)
    ]
    return RoleMessage(f"{_header(ctx)}\nHeadlines in the 7 days up to the date:\n" + "\n".join(lines))


def _forums(ctx: DecisionContext) -> RoleMessage:
    posts = ctx.forums.tail(20)
    if posts.empty:
        return RoleMessage(f"{_header(ctx)}\nNo forum posts up to the date.")
    lines = [
        f"{pd.Timestamp(d).date()} r/{sub} score {sc}: {t}"
        for d, sub, sc, t in posts[["date", "subreddit", "score", "post_text"]].itertuples(index=False)
    ]
    return RoleMessage(f"{_header(ctx)}\nForum posts up to the date:\n" + "\n".join(lines))


def _series_line(ctx: DecisionContext, symbol: str) -> str:
    closes = ctx.closes(symbol).tail(21)
    if len(closes) < 2:
        return f"{symbol}: no data"
    return (
        f"{symbol}: {closes.iloc[-1]:.2f}, {closes.iloc[-1] / closes.iloc[0] - 1:+.1%} "
        f"over {len(closes) - 1} sessions"
    )


def _peers(ctx: DecisionContext) -> RoleMessage:
    own = pd.Series(ctx.bars["close"].to_numpy(float)).tail(21)
    own_line = (
        f"{ctx.ticker}: {own.iloc[-1] / own.iloc[0] - 1:+.1%} over {len(own) - 1} sessions"
        if len(own) > 1
        else f"{ctx.ticker}: no data"
    )
    lines = [own_line] + [_series_line(ctx, p) for p in ctx.peers]
    if ctx.commodity:
        lines.append("commodity " + _series_line(ctx, ctx.commodity))
    return RoleMessage(f"{_header(ctx)}\nPeers and commodity:\n" + "\n".join(lines))


def _macro(ctx: DecisionContext) -> RoleMessage:
    events = ctx.macro.tail(15)
    lines = [
        f"{pd.Timestamp(d).date()} {c} ({p or 'n/a'}): {h}"
        for d, c, h, p in events[["date", "country", "headline", "policy_signal"]].itertuples(index=False)
    ]
    rates = [_series_line(ctx, s) for s in RATE_SYMBOLS if len(ctx.closes(s))]
    body = "\n".join(lines) if lines else "No macro events up to the date."
    if rates:
        body += "\nRates:\n" + "\n".join(rates)
    return RoleMessage(f"{_header(ctx)}\nMacro events up to the date:\n{body}")


def _system(expertise: str) -> str:
    return f"You are the {expertise} on a trading council. {OUTPUT_RULES}"


ROLES: dict[str, Role] = {
    r.name: r
    for r in (
        Role(
            "chart_pattern",
            _system(
                "chart-pattern analyst: read the 60-day candlestick chart for breakouts, "
                "support/resistance and trend channels"
            ),
            _chart,
        ),
        Role(
            "seasonal_trend",
            _system(
                "seasonal and secular-trend analyst: judge the long-horizon trend, "
                "month-of-year seasonality and cycles"
            ),
            _seasonal,
        ),
        Role(
            "indicator",
            _system(
                "technical-indicator analyst: weigh RSI14, MACD(12,26,9), SMA20/50/200, "
                "Bollinger(20,2) and ATR14"
            ),
            _indicator,
        ),
        Role("news", _system("news analyst: judge the sentiment of the headlines of the last 7 days"), _news),
        Role(
            "forum_sentiment",
            _system(
                "crowd-sentiment analyst: judge forum and Reddit posts, weighting popular and "
                "recent posts more"
            ),
            _forums,
        ),
        Role(
            "peer_commodity",
            _system("relative-strength analyst: compare the stock with its peers and with gold/oil moves"),
            _peers,
        ),
        Role(
            "geopolitics",
            _system(
                "macro and geopolitics analyst: judge CPI prints, FOMC decisions, rates and "
                "other dated macro events for risk"
            ),
            _macro,
        ),
    )
}
ROLE_NAMES: tuple[str, ...] = tuple(ROLES)


def prompt_versions() -> dict[str, str]:
    """Prompt version of every role."""
    return {name: role.prompt_version for name, role in ROLES.items()}
