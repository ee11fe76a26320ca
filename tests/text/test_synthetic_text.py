"""The synthetic market's text: the planted factor reaches the pipeline only through the
scored sentiment of headlines published before the close, with the strength asked for."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from stocker_core.baselines.oracle import day_sentiment
from stocker_core.config import Settings
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.market.synthetic import SyntheticSpec, synthetic_market
from stocker_core.text_events.configured import configured_events, configured_text
from stocker_core.text_events.events import parse_records
from stocker_core.text_events.sentiment import score_text
from stocker_core.text_events.store import read_events, replace_events
from stocker_core.text_events.synthetic import AFTER_CLOSE_PREFIX, news_bank, synthetic_text
from stocker_core.warehouse.db import Warehouse

TICKERS = ("SYN1", "SYN2", "SYN3", "SYN4")
LONG = {"tickers": TICKERS, "seed": 7, "start": date(2004, 1, 2), "years": 12.0}
"""~12,000 ticker-days: the Spearman IC's standard error is ~0.009."""


def _pre_close_ic(spec: SyntheticSpec) -> tuple[float, float, pd.DataFrame]:
    """(IC of D's pre-close scored sentiment vs r_(D+1), its rank correlation with f_D, rows)."""
    market, text = synthetic_market(spec), synthetic_text(spec)
    rows = []
    for ticker in spec.tickers:
        truth = market.truth.loc[market.truth["ticker"] == ticker].reset_index(drop=True)
        news = text.news.loc[text.news["ticker"] == ticker]
        rows.append(
            truth.assign(
                sentiment=day_sentiment(news, truth["date"]), next_return=truth["log_return"].shift(-1)
            )
        )
    frame = pd.concat(rows, ignore_index=True).dropna(subset=["sentiment", "next_return"])
    ic = spearmanr(frame["sentiment"], frame["next_return"])[0]
    return float(ic), float(spearmanr(frame["sentiment"], frame["factor"])[0]), frame


@pytest.mark.parametrize("ic", [0.1, 0.3])
def test_scored_pre_close_sentiment_recovers_the_planted_ic(ic):
    measured, with_factor, frame = _pre_close_ic(SyntheticSpec(ic=ic, **LONG))
    assert with_factor > 0.99  # the project's scorer reads the factor back, monotone
    assert (np.sign(frame["sentiment"]) == np.sign(frame["factor"])).mean() > 0.95
    # rank IC of a normal pair is (6/π)·asin(ic/2) ≈ 0.955·ic, and two volatility regimes mix:
    # the expected value is ~0.93·ic; the standard error ~0.009
    assert measured == pytest.approx(0.93 * ic, abs=0.025)


def test_with_ic_zero_nothing_leads_the_next_return():
    measured, with_factor, frame = _pre_close_ic(SyntheticSpec(ic=0.0, **LONG))
    assert with_factor > 0.99 and abs(measured) < 0.025
    # nor do forum posts or the previous day's return (no hidden path around the headlines)
    truth = synthetic_market(SyntheticSpec(ic=0.0, **LONG)).truth
    lagged = truth.groupby("ticker")["log_return"].shift(1)
    both = pd.DataFrame({"past": lagged, "now": truth["log_return"]}).dropna()
    assert abs(spearmanr(both["past"], both["now"])[0]) < 0.03


def test_every_session_has_one_to_three_pre_close_headlines_and_after_close_ones_come_later():
    spec = SyntheticSpec(ic=0.1, tickers=("SYN1", "SYN2"), years=2.0)
    news = synthetic_text(spec).news
    cutoffs = news["date"].map(decision_cutoff)
    instants = pd.to_datetime(news["published_at"], utc=True)
    after = news["headline"].str.startswith(AFTER_CLOSE_PREFIX).to_numpy()
    assert (instants[~after] < cutoffs[~after]).all()
    assert (instants[after] > cutoffs[after]).all()
    # every after-close headline is still D's New York day (the text's `date`)
    local_days = instants.dt.tz_convert("America/New_York").dt.tz_localize(None).dt.normalize()
    assert (local_days == news["date"]).all()
    per_day = news.loc[~after].groupby(["ticker", "date"]).size()
    sessions = synthetic_market(spec).sessions
    assert len(per_day) == 2 * len(sessions) and per_day.between(1, 3).all()
    assert 0.3 < after.sum() / (2 * len(sessions)) < 0.5


def test_after_close_headlines_would_leak_the_next_return_if_a_decision_saw_them():
    spec = SyntheticSpec(ic=0.1, **LONG)
    market, news = synthetic_market(spec), synthetic_text(spec).news
    after = news.loc[news["headline"].str.startswith(AFTER_CLOSE_PREFIX)]
    tone = after.assign(score=after["headline"].map(score_text)).groupby(["ticker", "date"])["score"].mean()
    truth = market.truth.assign(next_return=market.truth.groupby("ticker")["log_return"].shift(-1))
    joined = truth.set_index(["ticker", "date"]).join(tone.rename("after_close"), how="inner").dropna()
    assert spearmanr(joined["after_close"], joined["next_return"])[0] > 0.4


def test_headline_banks_are_ranked_by_the_project_scorer_with_the_meaning_s_sign():
    bank = news_bank("SYN1")
    positive = [score_text(t) for t in bank.positive]
    negative = [score_text(t) for t in bank.negative]
    assert positive == sorted(positive) and min(positive) > 0
    assert negative == sorted(negative, reverse=True) and max(negative) < 0
    assert not any("misses" in t or "lawsuit" in t for t in bank.positive)
    assert not any("beats" in t or "buyback" in t for t in bank.negative)
    tones = np.linspace(-3, 3, 61)
    scores = [score_text(t) for t in bank.pick(tones)]
    assert all(a <= b for a, b in zip(scores, scores[1:], strict=False))


def test_the_same_seed_gives_identical_text_another_seed_does_not():
    spec = SyntheticSpec(tickers=("SYN1", "SYN2"), years=1.0)
    first, second = synthetic_text.__wrapped__(spec), synthetic_text.__wrapped__(spec)
    for kind in ("news", "forums", "macro"):
        pd.testing.assert_frame_equal(getattr(first, kind), getattr(second, kind))
    other = synthetic_text.__wrapped__(SyntheticSpec(tickers=("SYN1", "SYN2"), years=1.0, seed=8))
    assert not first.news["headline"].equals(other.news["headline"])


def test_synthetic_events_match_the_validated_schema_and_survive_the_warehouse(tmp_path):
    settings = Settings(source="synthetic", synth_tickers="2", synth_years=0.5, home=tmp_path)
    text = configured_text(settings)
    assert len(text.macro) and text.forums["score"].min() >= 1
    for kind, frame in (("news", text.news), ("forums", text.forums), ("macro", text.macro)):
        validated = parse_records(kind, ((str(i), r) for i, r in enumerate(frame.to_dict("records"))))
        pd.testing.assert_frame_equal(validated, frame, check_dtype=False)
        pd.testing.assert_frame_equal(configured_events(settings, kind), frame)
    warehouse = Warehouse(tmp_path / "stocker.duckdb")
    assert replace_events(warehouse, "news", text.news) == len(text.news)
    stored = read_events(warehouse, "news")
    pd.testing.assert_frame_equal(stored, text.news, check_dtype=False)
    no_text = Settings(source="yfinance", home=tmp_path, text_dir=None, files_dir=None)
    assert configured_events(no_text, "news") is None  # a source without text and no folder
