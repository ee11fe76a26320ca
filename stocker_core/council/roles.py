"""The specialists' prompts: the role (system prompt, message builder, prompt version), the
built-in roles' message builders and the prompt mask."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from stocker_core.council.registry import SPECIALIST_NAMES, RoleMessage, SpecialistMap
from stocker_core.decision_context.decision import RATE_SYMBOLS, DecisionContext
from stocker_core.text_events.masking import PromptMask

OUTPUT_RULES = (
    'Answer with one JSON object and nothing else: {"signal": <float in [-1, 1], '
    '-1 strong sell, +1 strong buy>, "confidence": <float in [0, 1]>, "rationale": '
    '"<one or two sentences>"}. You only see data up to the decision date; never assume '
    "anything later. If your data is missing, answer signal 0 and confidence 0."
)
BUILDER_VERSION = "builders-v3"  # v3: a peer without the day's close is shown as missing


@dataclass(frozen=True)
class Role:
    """A specialist: name, system prompt, message builder and prompt version."""

    name: str
    system_prompt: str
    builder: Callable[[DecisionContext, PromptMask], RoleMessage]

    @property
    def prompt_version(self) -> str:
        """Hash of the prompt text and builder version: changing either invalidates votes."""
        digest = hashlib.sha256(f"{self.system_prompt}\n{BUILDER_VERSION}".encode())
        return digest.hexdigest()[:12]

    def build(self, ctx: DecisionContext, mask: PromptMask | None = None) -> RoleMessage:
        """The role's message on ``ctx``; unmasked unless a ``mask`` is given."""
        return self.builder(ctx, mask or PromptMask.identity(ctx.ticker, ctx.date))


def prompt_mask(ctx: DecisionContext, enabled: bool = True) -> PromptMask:
    """The mask of ``ctx`` (``STOCKER_LLM_MASK``): labels for the stock, its peers and the
    other symbols, sessions counted back from the decision, prices rebased to 100 at the
    first session of the decision's month — the start of an episode's month. Votes are
    cached per (ticker, date), so the base may not depend on which episode asks."""
    if not enabled:
        return PromptMask.identity(ctx.ticker, ctx.date)
    others = [ctx.commodity] if ctx.commodity else []
    others += [s for s in dict.fromkeys(ctx.context_closes["symbol"]) if s not in ctx.peers]
    return PromptMask.build(
        ctx.ticker,
        ctx.date,
        ctx.bars["date"],
        ctx.bars["close"].to_numpy(float),
        ctx.date.replace(day=1),
        ctx.peers,
        [s for s in others if s],
    )


def _header(ctx: DecisionContext, m: PromptMask) -> str:
    if m.enabled:
        return (
            f"Stock {m.name(ctx.ticker)}, decision at session 0, last close {m.price(ctx.price)} "
            "(prices rebased: 100 = the close of the month's first session)."
        )
    return f"Ticker {ctx.ticker}, decision date {ctx.date.date()}, last close {m.price(ctx.price)}."


def _closes_table(ctx: DecisionContext, m: PromptMask, days: int) -> str:
    tail = m.price_frame(ctx.bars.tail(days))
    if tail.empty:
        return "No price bars."
    rows = [
        f"{m.day(d)} O{o:.2f} H{h:.2f} L{lo:.2f} C{c:.2f}"
        for d, o, h, lo, c in tail[["date", "open", "high", "low", "close"]].itertuples(index=False)
    ]
    return "\n".join(rows)


def chart_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The chart_pattern role's message: the last 60 sessions as OHLC, and the chart image."""
    text = f"{_header(ctx, m)}\nThe last 60 trading days as OHLC (oldest first):\n{_closes_table(ctx, m, 60)}"
    return RoleMessage(text, ctx.chart_path if ctx.chart_path and ctx.chart_path.exists() else None)


def seasonal_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The seasonal_trend role's message: the month-end closes of the whole history."""
    bars = ctx.bars
    if bars.empty:
        return RoleMessage(f"{_header(ctx, m)}\nNo price history.")
    monthly = (
        pd.Series(bars["close"].to_numpy(float), index=pd.DatetimeIndex(bars["date"])).resample("ME").last()
    )
    lines = [f"{m.month(d)} {m.price(c)}" for d, c in monthly.items()]
    return RoleMessage(
        f"{_header(ctx, m)}\nMonth-end closes ({len(bars)} days of history):\n" + "\n".join(lines)
    )


def indicator_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The indicator role's message: the indicators of the last 5 sessions."""
    if ctx.indicators.empty:
        return RoleMessage(f"{_header(ctx, m)}\nNo indicators.")
    last = ctx.indicators.tail(5)
    tail = m.price_frame(last).drop(columns=["date"]).round(3)
    tail.index = [m.day(d) for d in last["date"]]
    return RoleMessage(f"{_header(ctx, m)}\nIndicators for the last 5 sessions:\n{tail.to_string()}")


def news_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The news role's message: the headlines of the 7 days up to the date."""
    if ctx.news.empty:
        return RoleMessage(f"{_header(ctx, m)}\nNo headlines in the 7 days up to the date.")
    lines = [
        f"{m.day(d)} [{m.text(s)}] {m.text(h)}"
        for d, s, h in ctx.news[["date", "source", "headline"]].itertuples(index=False)
    ]
    return RoleMessage(f"{_header(ctx, m)}\nHeadlines in the 7 days up to the date:\n" + "\n".join(lines))


def forum_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The forum_sentiment role's message: the last 20 forum posts up to the date."""
    posts = ctx.forums.tail(20)
    if posts.empty:
        return RoleMessage(f"{_header(ctx, m)}\nNo forum posts up to the date.")
    lines = [
        f"{m.day(d)} r/{m.text(sub)} score {sc}: {m.text(t)}"
        for d, sub, sc, t in posts[["date", "subreddit", "score", "post_text"]].itertuples(index=False)
    ]
    return RoleMessage(f"{_header(ctx, m)}\nForum posts up to the date:\n" + "\n".join(lines))


def _series_line(ctx: DecisionContext, m: PromptMask, symbol: str, current: bool = False) -> str:
    """The symbol's last level and 21-session move; with ``current``, a series without the
    day's close is shown as missing (where its data ends), not as its last close."""
    closes = ctx.closes(symbol)
    if current and len(closes) and not len(ctx.current_closes(symbol)):
        return f"{m.name(symbol)}: no close on the day (its data ends {m.day(closes.index.max())})"
    closes = closes.tail(21)
    if len(closes) < 2:
        return f"{m.name(symbol)}: no data"
    level = "" if m.enabled else f"{closes.iloc[-1]:.2f}, "
    return (
        f"{m.name(symbol)}: {level}{closes.iloc[-1] / closes.iloc[0] - 1:+.1%} "
        f"over {len(closes) - 1} sessions"
    )


def peer_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The peer_commodity role's message: 21-session moves of the stock, its peers and commodity."""
    own = pd.Series(ctx.bars["close"].to_numpy(float)).tail(21)
    own_line = (
        f"{m.name(ctx.ticker)}: {own.iloc[-1] / own.iloc[0] - 1:+.1%} over {len(own) - 1} sessions"
        if len(own) > 1
        else f"{m.name(ctx.ticker)}: no data"
    )
    lines = [own_line] + [_series_line(ctx, m, p, current=True) for p in ctx.peers]
    if ctx.commodity:
        lines.append("commodity " + _series_line(ctx, m, ctx.commodity, current=True))
    return RoleMessage(f"{_header(ctx, m)}\nPeers and commodity:\n" + "\n".join(lines))


def macro_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The geopolitics role's message: the last 15 macro events and the rate series."""
    events = ctx.macro.tail(15)
    lines = [
        f"{m.day(d)} {c} ({m.text(p) if p else 'n/a'}): {m.text(h)}"
        for d, c, h, p in events[["date", "country", "headline", "policy_signal"]].itertuples(index=False)
    ]
    rates = [_series_line(ctx, m, s) for s in RATE_SYMBOLS if len(ctx.closes(s))]
    body = "\n".join(lines) if lines else "No macro events up to the date."
    if rates:
        body += "\nRates:\n" + "\n".join(rates)
    return RoleMessage(f"{_header(ctx, m)}\nMacro events up to the date:\n{body}")


def expertise_prompt(expertise: str) -> str:
    """A specialist's system prompt: who it is on the council, then the shared output rules
    (``OUTPUT_RULES``)."""
    return f"You are the {expertise} on a trading council. {OUTPUT_RULES}"


ROLES: Mapping[str, Role] = SpecialistMap(lambda s: Role(s.name, s.system_prompt, s.builder))
"""Every registered specialist's role (name, system prompt, builder) in council order, read
live from the registry (``council/registry.py``); the built-in ones are declared in
``council/specialists.py``."""
ROLE_NAMES: Sequence[str] = SPECIALIST_NAMES
"""The council's roles in order: the registered specialists' names, read live (a role
registered later is in every loop over them)."""


def prompt_versions() -> dict[str, str]:
    """Prompt version of every role."""
    return {name: role.prompt_version for name, role in ROLES.items()}
