"""Finance-aware sentiment: VADER with a small market lexicon update."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

# Valences on VADER's -4..+4 scale for words general-purpose VADER misses or misreads.
FINANCE_LEXICON: dict[str, float] = {
    "beat": 2.0,
    "beats": 2.0,
    "tops": 1.5,
    "surge": 2.2,
    "surges": 2.2,
    "soar": 2.3,
    "soars": 2.3,
    "rally": 1.8,
    "rallies": 1.8,
    "upgrade": 2.2,
    "upgrades": 2.2,
    "upgraded": 2.2,
    "outperform": 1.8,
    "bullish": 2.3,
    "record": 1.2,
    "growth": 1.2,
    "raises": 1.2,
    "raised": 1.0,
    "rebound": 1.5,
    "rebounds": 1.5,
    "strong": 1.5,
    "buyback": 1.5,
    "dovish": 1.5,
    "cut": -0.5,
    "cuts": -0.8,
    "easing": 1.0,
    "long": 0.8,
    "calls": 0.6,
    "moon": 1.5,
    "miss": -2.0,
    "misses": -2.0,
    "missed": -2.0,
    "downgrade": -2.2,
    "downgrades": -2.2,
    "downgraded": -2.2,
    "underperform": -1.8,
    "bearish": -2.3,
    "plunge": -2.5,
    "plunges": -2.5,
    "slump": -2.0,
    "slumps": -2.0,
    "tumble": -2.2,
    "tumbles": -2.2,
    "dip": -1.0,
    "dips": -1.0,
    "drop": -1.3,
    "drops": -1.3,
    "falls": -1.3,
    "weak": -1.6,
    "weaker": -1.6,
    "slowdown": -1.5,
    "layoffs": -1.5,
    "lawsuit": -1.5,
    "probe": -1.3,
    "antitrust": -1.2,
    "recall": -1.5,
    "hawkish": -1.5,
    "hike": -1.0,
    "hikes": -1.0,
    "inflation": -0.8,
    "hotter": -1.0,
    "recession": -2.0,
    "selloff": -2.0,
    "puts": -0.6,
    "short": -0.8,
    "trimming": -0.8,
    "guidance": 0.0,
    "disappoints": -1.8,
    "losses": -1.4,
    "concerns": -1.2,
    "breakthrough": 1.6,
    "breakthroughs": 1.6,
    "slowing": -1.0,
    "crushed": -2.2,
    "destroyed": -2.5,
    "disaster": -2.6,
    "bleeding": -2.0,
    "overblown": 1.0,
    "widen": -0.6,
    "low": -0.8,
    "surpasses": 1.6,
    "contract": 0.8,
    "loaded": 0.8,
    "credible": 1.2,
    "demand": 0.6,
    "slips": -1.0,
    "delay": -1.2,
    "delays": -1.2,
    "ban": -1.8,
    "restrictions": -1.2,
}


@lru_cache(maxsize=1)
def analyzer() -> SentimentIntensityAnalyzer:
    """A shared VADER analyzer with the finance lexicon applied."""
    vader = SentimentIntensityAnalyzer()
    vader.lexicon.update(FINANCE_LEXICON)
    return vader


@lru_cache(maxsize=4096)
def score_text(text: str) -> float:
    """VADER compound score of ``text`` in [-1, 1] (0 for empty text)."""
    if not text or not text.strip():
        return 0.0
    return float(analyzer().polarity_scores(text)["compound"])


def weighted_sentiment(scores: Sequence[float], weights: Sequence[float]) -> tuple[float, float]:
    """Weighted mean score and agreement in [0, 1] (1 = every score has the same sign)."""
    total = float(sum(weights))
    if not scores or total <= 0:
        return 0.0, 0.0
    mean = sum(s * w for s, w in zip(scores, weights, strict=True)) / total
    spread = math.sqrt(sum(w * (s - mean) ** 2 for s, w in zip(scores, weights, strict=True)) / total)
    agreement = max(0.0, 1.0 - spread)
    return mean, agreement
