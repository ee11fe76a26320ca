"""Finance-aware sentiment."""

from __future__ import annotations

from stocker_core.text_events.sentiment import score_text, weighted_sentiment


def test_finance_words():
    assert score_text("Apple beats estimates") > 0.2
    assert score_text("Intel misses, analyst downgrade") < -0.2
    assert score_text("Fed turns hawkish") < 0 < score_text("Fed turns dovish")
    assert score_text("") == 0.0


def test_weighted_sentiment():
    assert weighted_sentiment([], []) == (0.0, 0.0)
    mean, agreement = weighted_sentiment([1.0, -1.0], [3.0, 1.0])
    assert mean == 0.5 and 0 <= agreement < 1
    assert weighted_sentiment([0.5, 0.5], [1, 1]) == (0.5, 1.0)
