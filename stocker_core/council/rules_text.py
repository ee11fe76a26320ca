"""The text specialists' rules over many days at once: ``news``, ``forum_sentiment`` and
``geopolitics``. Each event is scored once; the (day, event) pairs a day may see — published
strictly before its decision cut-off, within the role's window — and their recency weights
are arrays over all days; each day's vote is combined from its pairs, in frame order."""

from __future__ import annotations

import math

import numpy as np

from stocker_core.council.day_arrays import DAY_NS, DayGrid, EventPairs, TickerArrays
from stocker_core.council.rules_cross import rate_moves
from stocker_core.council.vote_columns import RoleVotes, clip
from stocker_core.decision_context.decision import NEWS_WINDOW_DAYS
from stocker_core.text_events.events import POLICY_VALENCE
from stocker_core.text_events.sentiment import score_text, weighted_sentiment

LABEL_VALENCE = {"positive": 1.0, "negative": -1.0, "neutral": 0.0}


def _recency(pairs: EventPairs, half_life: float) -> np.ndarray:
    """Each pair's weight: halved every ``half_life`` days of age."""
    return np.power(0.5, pairs.ages / half_life)


def news_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """Headline sentiment (finance lexicon, blended with labels) of the 7 days before the
    cut-off, weighted by recency."""
    out = RoleVotes("news")
    pairs = a.news.pairs(g, g.cutoff_ns - NEWS_WINDOW_DAYS * DAY_NS)
    headlines, labels = a.news.columns["headline"], a.news.columns["sentiment_label"]
    scores: dict[int, float] = {}
    for p in dict.fromkeys(pairs.pos.tolist()):
        s = score_text(headlines[p])
        if isinstance(labels[p], str) and labels[p] in LABEL_VALENCE:
            s = 0.5 * s + 0.5 * LABEL_VALENCE[labels[p]]
        scores[p] = s
    pos, weights, bounds = pairs.pos.tolist(), _recency(pairs, 3.0).tolist(), pairs.bounds.tolist()
    for i, day in enumerate(g.days):
        lo, hi = bounds[i], bounds[i + 1]
        if lo == hi:
            out.abstain(f"no {a.ticker} headlines in the 7 days up to {day.date()}")
            continue
        mean, agreement = weighted_sentiment([scores[p] for p in pos[lo:hi]], weights[lo:hi])
        n = hi - lo
        confidence = clip(
            min(1.0, 0.3 + 0.15 * n) * (0.4 + 0.6 * agreement) * min(1.0, 0.3 + abs(mean)), 0, 1
        )
        latest = headlines[pos[hi - 1]]
        out.add(
            clip(mean * 1.3), confidence, f"{n} headlines, weighted sentiment {mean:+.2f}; latest: {latest!r}"
        )
    return out


def forum_sentiment_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """Forum posts of the 30 days up to the day, weighted by recency (half-life 7 days) and score."""
    out = RoleVotes("forum_sentiment")
    pairs = a.forums.age_window(g, 30)
    texts = a.forums.columns["post_text"]
    popularity = np.log1p(np.clip(a.forums.scores, 0, None) + 1)
    weights = (_recency(pairs, 7.0) * popularity[pairs.pos]).tolist()
    pos, bounds = pairs.pos.tolist(), pairs.bounds.tolist()
    scores = {p: score_text(texts[p]) for p in dict.fromkeys(pos)}  # each post once
    for i, day in enumerate(g.days):
        lo, hi = bounds[i], bounds[i + 1]
        if lo == hi:
            out.abstain(f"no {a.ticker} forum posts in the 30 days up to {day.date()}")
            continue
        mean, agreement = weighted_sentiment([scores[p] for p in pos[lo:hi]], weights[lo:hi])
        n = hi - lo
        confidence = clip(
            min(1.0, 0.2 + 0.1 * n) * (0.4 + 0.6 * agreement) * min(1.0, 0.3 + abs(mean)) * 0.8, 0, 1
        )
        out.add(clip(mean * 1.2), confidence, f"{n} posts in 30 days, score-weighted sentiment {mean:+.2f}")
    return out


def _macro_score(headline: str, signal: object) -> float:
    if isinstance(signal, str) and signal in POLICY_VALENCE:
        return 0.7 * POLICY_VALENCE[signal] + 0.3 * score_text(headline)
    return score_text(headline)


def geopolitics_votes(a: TickerArrays, g: DayGrid) -> RoleVotes:
    """Macro events of the 45 days up to the day (hawkish/dovish, half-life 10 days) and
    the rate symbols' 20-day moves."""
    out = RoleVotes("geopolitics")
    pairs = a.macro.age_window(g, 45)
    headlines, signals = a.macro.columns["headline"], a.macro.columns["policy_signal"]
    scores = {p: _macro_score(headlines[p], signals[p]) for p in dict.fromkeys(pairs.pos.tolist())}
    weight_array = _recency(pairs, 10.0)
    pos, weights, bounds = pairs.pos.tolist(), weight_array.tolist(), pairs.bounds.tolist()
    rates = rate_moves(a, g)
    for i, day in enumerate(g.days):
        lo, hi = bounds[i], bounds[i + 1]
        if lo == hi and not rates[i]:
            out.abstain(f"no macro events in the 45 days up to {day.date()} and no rate symbols")
            continue
        parts, notes, conf = [], [], 0.2
        if hi > lo:
            mean, agreement = weighted_sentiment([scores[p] for p in pos[lo:hi]], weights[lo:hi])
            parts.append(0.6 * mean)
            conf += 0.4 * agreement * min(1.0, float(weight_array[lo:hi].sum()))
            latest = headlines[pos[hi - 1]]
            notes.append(f"{hi - lo} macro events, recency-weighted stance {mean:+.2f}; latest: {latest!r}")
        if rates[i]:
            avg = float(np.mean(list(rates[i].values())))
            parts.append(-0.4 * math.tanh(avg / 0.05))  # rising yields weigh on equities
            conf += 0.2
            notes.append(f"rates {avg:+.1%} over 20 days ({', '.join(sorted(rates[i]))})")
        out.add(clip(sum(parts)), clip(conf * 0.8, 0, 1), "; ".join(notes))
    return out
