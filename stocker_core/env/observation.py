"""The rich observation: ``TradingEnv``'s cheap core observation plus the council inputs
of the decision day, cut point in time exactly as the council's: both read them from
``stocker_core.decision_context`` (``CouncilInputs.context``: bars and indicators dated on or before
the day, text published before its NYSE close, news from the 7 days before it). Bounded in
size (``api_models`` limits).

``CouncilView`` holds one episode's inputs and builds each day's fields once; the
server and any other client (a trainer, an LLM agent) use it the same way::

    view = CouncilView.load(episode, settings)
    payload = view.observation(env.observation(), include_chart=True)
"""

from __future__ import annotations

import base64
import math
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.config import Settings
from stocker_core.decision_context.decision import RATE_SYMBOLS, CouncilInputs, DecisionContext
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.env.api_models import (
    EVENT_LIMIT,
    PRICE_HISTORY_LIMIT,
    SYMBOL_CLOSES,
    SYMBOL_LIMIT,
    TEXT_CHARS,
)
from stocker_core.env.environment import Observation
from stocker_core.env.episode import Episode
from stocker_core.market.indicators import INDICATOR_COLUMNS

CHART_CACHE = 64
"""Rendered chart PNGs kept in memory per view (about 60 KB each)."""


def _text(value: Any) -> str:
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _day(value: Any) -> str:
    return pd.Timestamp(value).date().isoformat()


def _instant(value: Any) -> str:
    return pd.Timestamp(value).tz_convert("UTC").isoformat()


def _latest(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.tail(EVENT_LIMIT) if len(frame) else frame


def indicator_fields(ctx: DecisionContext) -> dict[str, float | None]:
    """The indicators of the decision day (None where undefined or the day has no row)."""
    rows = ctx.indicators
    if not len(rows) or pd.Timestamp(rows["date"].iloc[-1]).normalize() != ctx.date:
        return dict.fromkeys(INDICATOR_COLUMNS)
    last = rows.iloc[-1]
    return {name: _number(last.get(name)) for name in INDICATOR_COLUMNS}


def headline_fields(ctx: DecisionContext) -> list[dict[str, Any]]:
    """The latest news of the 7 days before the cut-off, oldest first."""
    return [
        {
            "date": _day(r["date"]),
            "published_at": _instant(r["published_at"]),
            "headline": _text(r["headline"]),
            "source": _text(r.get("source")),
            "sentiment": r.get("sentiment_label") or None,
        }
        for r in _latest(ctx.news).to_dict("records")
    ]


def forum_fields(ctx: DecisionContext) -> list[dict[str, Any]]:
    """The latest forum posts published before the cut-off, oldest first."""
    return [
        {
            "date": _day(r["date"]),
            "published_at": _instant(r["published_at"]),
            "subreddit": _text(r.get("subreddit")),
            "score": int(_number(r.get("score")) or 0),
            "text": _text(r["post_text"]),
        }
        for r in _latest(ctx.forums).to_dict("records")
    ]


def macro_fields(ctx: DecisionContext) -> list[dict[str, Any]]:
    """The latest macro events published before the cut-off, oldest first."""
    return [
        {
            "date": _day(r["date"]),
            "published_at": _instant(r["published_at"]),
            "country": _text(r.get("country")),
            "headline": _text(r["headline"]),
            "policy_signal": r.get("policy_signal") or None,
        }
        for r in _latest(ctx.macro).to_dict("records")
    ]


def symbol_fields(ctx: DecisionContext) -> list[dict[str, Any]]:
    """Peers, the commodity and rates that have closes up to the day (last closes each)."""
    kinds = {**dict.fromkeys(RATE_SYMBOLS, "rate"), **dict.fromkeys(ctx.peers, "peer")}
    if ctx.commodity:
        kinds[ctx.commodity] = "commodity"
    closes = ctx.context_closes  # already cut at the day by build_context
    by_symbol = dict(tuple(closes.groupby("symbol", sort=False))) if len(closes) else {}
    out = []
    for symbol, kind in kinds.items():
        rows = by_symbol.get(symbol)
        if rows is None or not len(rows):
            continue
        rows = rows.sort_values("date").tail(SYMBOL_CLOSES)
        out.append(
            {
                "symbol": symbol,
                "kind": kind,
                "dates": [pd.Timestamp(d).date().isoformat() for d in rows["date"]],
                "closes": [round(float(c), 6) for c in rows["close"].to_numpy()],
            }
        )
    return out[:SYMBOL_LIMIT]


def council_fields(ctx: DecisionContext) -> dict[str, Any]:
    """The council inputs of one decision context as bounded, JSON-ready fields."""
    return {
        "cutoff": decision_cutoff(ctx.date).isoformat(),
        "indicators": indicator_fields(ctx),
        "headlines": headline_fields(ctx),
        "forum_posts": forum_fields(ctx),
        "peers": symbol_fields(ctx),
        "macro_events": macro_fields(ctx),
    }


def core_fields(observation: Observation) -> dict[str, Any]:
    """``TradingEnv``'s observation with the price history cut to its last closes."""
    data = observation.to_dict(history=False)
    data["price_history"] = observation.price_history[-PRICE_HISTORY_LIMIT:].tolist()
    return data


class CouncilView:
    """One episode's council inputs, served per decision day (each day built once)."""

    def __init__(self, inputs: CouncilInputs, charts_dir: Path) -> None:
        self.inputs = inputs
        self.ticker = inputs.ticker
        self.charts_dir = Path(charts_dir)
        self._days: dict[str, dict[str, Any]] = {}
        self._pngs: OrderedDict[str, bytes] = OrderedDict()
        self._chart_files: dict[str, Path] = {}
        self._lock = threading.Lock()

    @classmethod
    def load(cls, episode: Episode, settings: Settings) -> CouncilView:
        """The view of ``episode``: the council's own inputs (``load_council_inputs`` with
        the ticker's peers and commodity; text from the warehouse's text tables when they
        hold any, else the configured text folder)."""
        from stocker_core.env.peers import council_inputs
        from stocker_core.text_events.store import warehouse_text
        from stocker_core.warehouse.db import Warehouse

        text = warehouse_text(Warehouse(settings.warehouse_path))
        inputs = council_inputs(episode.ticker, episode.start, episode.end, settings, text)
        return cls(inputs, settings.charts_dir)

    def chart_file(self, day: str) -> Path:
        """Where the charts asset writes the chart of ``day``: ``<charts>/<TICKER>/<day>.png``."""
        path = self._chart_files.get(day)
        if path is None:
            from stocker_core.market.charts import chart_path

            path = chart_path(self.charts_dir, self.ticker, pd.Timestamp(day).date())
            self._chart_files[day] = path
        return path

    def fields(self, day: str) -> dict[str, Any]:
        """The council fields of ``day`` (``YYYY-MM-DD``), built on first use."""
        cached = self._days.get(day)
        if cached is None:
            cached = council_fields(self.inputs.context(day))
            with self._lock:
                self._days[day] = cached
        return cached

    def prepare(self, days: list[str]) -> None:
        """Build the fields of every day in advance (slow work off the request path)."""
        for day in days:
            self.fields(day)

    def chart_png(self, day: str) -> bytes:
        """The chart PNG of ``day``: the stored file, else rendered now (kept in memory)."""
        path = self.chart_file(day)
        if path.is_file():
            return path.read_bytes()
        with self._lock:
            if day in self._pngs:
                self._pngs.move_to_end(day)
                return self._pngs[day]
        from stocker_core.market.charts import render_chart

        png = render_chart(self.inputs.bars, self.ticker, day)
        with self._lock:
            self._pngs[day] = png
            while len(self._pngs) > CHART_CACHE:
                self._pngs.popitem(last=False)
        return png

    def observation(self, core: Observation, include_chart: bool = False) -> dict[str, Any]:
        """The rich observation: ``core`` plus the council inputs of its day."""
        data = core_fields(core)
        data.update(self.fields(core.date))
        path = self.chart_file(core.date)
        data["chart"] = {
            "path": str(path) if path.is_file() else None,
            "png_base64": base64.b64encode(self.chart_png(core.date)).decode() if include_chart else None,
        }
        return data
