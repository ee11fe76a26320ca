"""Sentiment and macro-event tools: text published before the decision's close, scored with
the finance VADER lexicon (``stocker_core.text_events.sentiment``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from stocker_core.agent.arguments import MAX_LIST_ITEMS, int_in_range, rounded
from stocker_core.market.calendar import NEW_YORK
from stocker_core.text_events.sentiment import score_text, weighted_sentiment

MAX_TEXT_DAYS = 30
MAX_MACRO_DAYS = 90
MAX_TEXT_CHARS = 160


RECENCY_HALF_LIFE_DAYS = 1.0
"""Half-life of a headline's weight in the recency-weighted mean."""


def _window_start(cutoff: pd.Timestamp, days: int) -> pd.Timestamp:
    """Where a ``days`` window before ``cutoff`` opens: midnight New York of the cutoff's day
    for ``days=0`` (that session's headlines alone), else ``days`` calendar days earlier."""
    if days == 0:
        return cutoff.tz_convert(NEW_YORK).normalize().tz_convert("UTC")
    return cutoff - pd.Timedelta(days=days)


def _recent(frame: pd.DataFrame, cutoff: pd.Timestamp, days: int) -> pd.DataFrame:
    """Rows published in the window of ``days`` before ``cutoff`` (``_window_start``), newest first."""
    if frame.empty:
        return frame
    published = pd.to_datetime(frame["published_at"], utc=True)
    start = _window_start(cutoff, days)
    # a date-only row of the day before is stamped at midnight that starts the decision day
    inside = published > start if days == 0 else published >= start
    return frame.loc[inside.to_numpy()].iloc[::-1]


def recency_weights(published: pd.Series, cutoff: pd.Timestamp) -> list[float]:
    """Each row's weight in the recency-weighted mean: halved every ``RECENCY_HALF_LIFE_DAYS``
    of age at ``cutoff``."""
    age = (cutoff - pd.to_datetime(published, utc=True)).dt.total_seconds() / 86400.0
    return [float(0.5 ** (max(0.0, a) / RECENCY_HALF_LIFE_DAYS)) for a in age]


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"


def _scored(rows: pd.DataFrame, text_column: str, weights: list[float]) -> dict[str, Any]:
    scores = [score_text(str(t)) for t in rows[text_column]]
    mean, agreement = weighted_sentiment(scores, weights)
    shown = rows.head(MAX_LIST_ITEMS)
    items = [
        {"date": pd.Timestamp(d).date().isoformat(), "text": _clip(t), "sentiment": rounded(s, 3)}
        for d, t, s in zip(shown["date"], shown[text_column], scores[: len(shown)], strict=True)
    ]
    return {
        "count": len(rows),
        "mean_sentiment": rounded(mean, 3) if scores else None,
        "agreement": rounded(agreement, 3) if scores else None,
        "items": items,
        "truncated": len(rows) > MAX_LIST_ITEMS,
    }


def news(visible: pd.DataFrame, cutoff: pd.Timestamp, days: int) -> dict[str, Any]:
    """The ``news`` tool: headlines of the last ``days`` days (0: the decision day's alone)
    with VADER scores, their mean and their recency-weighted mean."""
    days = int_in_range("days", days, 0, MAX_TEXT_DAYS)
    rows = _recent(visible, cutoff, days)
    answer = {"days": days, **_scored(rows, "headline", [1.0] * len(rows))}
    recent = None
    if len(rows):
        scores = [score_text(str(t)) for t in rows["headline"]]
        recent = rounded(weighted_sentiment(scores, recency_weights(rows["published_at"], cutoff))[0], 3)
    answer["recency_weighted_sentiment"] = recent
    return answer


def forum_posts(visible: pd.DataFrame, cutoff: pd.Timestamp, days: int) -> dict[str, Any]:
    """The ``forum_posts`` tool: posts of the last ``days`` days, mean weighted by up-votes."""
    days = int_in_range("days", days, 1, MAX_TEXT_DAYS)
    rows = _recent(visible, cutoff, days)
    weights = [1.0 + max(0.0, float(s)) for s in rows["score"]] if len(rows) else []
    return {"days": days, **_scored(rows, "post_text", weights)}


def macro_events(visible: pd.DataFrame, cutoff: pd.Timestamp, days: int) -> dict[str, Any]:
    """The ``macro_events`` tool: dated macro events (CPI, FOMC, ...) with their policy signal."""
    days = int_in_range("days", days, 1, MAX_MACRO_DAYS)
    rows = _recent(visible, cutoff, days)
    shown = rows.head(MAX_LIST_ITEMS)
    signals = [s for s in rows["policy_signal"] if isinstance(s, str) and s]
    return {
        "days": days,
        "count": len(rows),
        "hawkish": sum(s in ("hawkish", "negative") for s in signals),
        "dovish": sum(s in ("dovish", "positive") for s in signals),
        "items": [
            {
                "date": pd.Timestamp(d).date().isoformat(),
                "headline": _clip(h),
                "policy_signal": s if isinstance(s, str) and s else None,
            }
            for d, h, s in zip(shown["date"], shown["headline"], shown["policy_signal"], strict=True)
        ],
        "truncated": len(rows) > MAX_LIST_ITEMS,
    }
