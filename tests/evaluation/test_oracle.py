"""The ``oracle`` policy: D's pre-close headline sentiment, never anything published later."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stocker_core.baselines.oracle import OraclePolicy, day_sentiment, oracle_long, ticker_news
from stocker_core.config import get_settings
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import load_episode
from stocker_core.env.policies import SettingsRequiredError, make_policy, policy_names
from stocker_core.evaluation.backtests import backtest
from stocker_core.text_events.events import parse_records
from stocker_core.text_events.sentiment import score_text

GOOD = "ACME beats estimates and raises guidance"
BAD = "ACME plunges after a disastrous recall"
UPGRADE = "ACME upgraded to outperform"


def _news(rows: list[dict]) -> pd.DataFrame:
    return parse_records("news", ((str(i), {"ticker": "ACME", **r}) for i, r in enumerate(rows)))


def test_day_sentiment_averages_the_headlines_of_d_before_its_close():
    news = _news(
        [
            {"published_at": "2023-11-21T16:30:00-05:00", "headline": BAD},  # after the 21st's close
            {"date": "2023-11-21", "headline": UPGRADE},  # date only: midnight → counts on the 22nd
            {"published_at": "2023-11-22T10:00:00-05:00", "headline": GOOD},
            {"published_at": "2023-11-22T16:05:00-05:00", "headline": BAD},  # after the close
            {"published_at": "2023-11-24T12:00:00-05:00", "headline": GOOD},  # early close 13:00
            {"published_at": "2023-11-24T13:30:00-05:00", "headline": BAD},  # after that close
        ]
    )
    days = ["2023-11-21", "2023-11-22", "2023-11-24", "2023-11-27"]
    got = day_sentiment(news, days)
    assert score_text(GOOD) > 0 > score_text(BAD) and score_text(UPGRADE) > 0
    assert np.isnan(got[0]) and np.isnan(got[3])
    assert got[1] == pytest.approx((score_text(UPGRADE) + score_text(GOOD)) / 2)
    assert got[2] == pytest.approx(score_text(GOOD))
    np.testing.assert_array_equal(oracle_long(news, days), [False, True, True, False])
    assert not oracle_long(news.iloc[:0], days).any()


@pytest.fixture
def synthetic_env(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "synthetic")
    monkeypatch.setenv("STOCKER_SYNTH_TICKERS", "2")
    monkeypatch.setenv("STOCKER_SYNTH_YEARS", "1.5")
    monkeypatch.setenv("STOCKER_SYNTH_START", "2015-01-01")
    return get_settings(fresh=True)


def _planted(news: pd.DataFrame, days: pd.DatetimeIndex, minutes_after_close: float) -> pd.DataFrame:
    """An extreme headline against each day's pre-close tone, ``minutes_after_close`` after D's close."""
    tone = oracle_long(news, days)
    rows = [
        {
            "published_at": (decision_cutoff(day) + pd.Timedelta(minutes=minutes_after_close)).isoformat(),
            "headline": "ACME collapses in a disastrous crash"
            if up
            else "ACME soars on a spectacular record beat",
        }
        for day, up in zip(days, tone, strict=True)
    ]
    planted = _news(rows).assign(ticker=news["ticker"].iloc[0])
    return pd.concat([news, planted], ignore_index=True)


def test_headlines_after_the_close_never_reach_the_decision(synthetic_env):
    episode = load_episode("SYN1|2015-06-01", synthetic_env)
    news = ticker_news("SYN1", synthetic_env)
    assert news["headline"].str.startswith("After the bell").any()  # the source plants some itself
    wanted = oracle_long(news, episode.dates)
    assert 0.2 < wanted.mean() < 0.8
    after = _planted(news, episode.dates, minutes_after_close=1)
    np.testing.assert_array_equal(oracle_long(after, episode.dates), wanted)
    at_close = _planted(news, episode.dates, minutes_after_close=0)  # published at the close: too late
    np.testing.assert_array_equal(oracle_long(at_close, episode.dates), wanted)
    before = _planted(news, episode.dates, minutes_after_close=-1)  # the control: this one counts
    assert (oracle_long(before, episode.dates) != wanted).mean() > 0.5


def test_oracle_is_registered_and_its_per_step_and_vectorised_runs_agree(synthetic_env):
    assert "oracle" in policy_names()
    episode = load_episode("SYN2|2015-09-01", synthetic_env)
    fast = backtest(episode, ["oracle", "buy_and_hold"], settings=synthetic_env)
    slow = backtest(episode, ["oracle", "buy_and_hold"], settings=synthetic_env, vectorised=False)
    assert not fast.failures and not slow.failures
    a, b = fast.run_of("oracle"), slow.run_of("oracle")
    assert (a.method, b.method) == ("vectorised", "per_step")
    np.testing.assert_array_equal(a.sides, b.sides)
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-9)
    wanted = oracle_long(ticker_news("SYN2", synthetic_env), episode.dates)
    np.testing.assert_array_equal(a.positions > 0, wanted)
    policy = make_policy("oracle", TradingEnv(episode), settings=synthetic_env)
    assert isinstance(policy, OraclePolicy)
    with pytest.raises(SettingsRequiredError, match="oracle"):  # its headlines are the run's
        make_policy("oracle", TradingEnv(episode))


def test_on_real_data_the_oracle_follows_the_news(files_env):
    episode = load_episode("task_easy", files_env)
    news = ticker_news("AAPL", files_env)
    sentiment = day_sentiment(news, episode.dates)
    assert np.isfinite(sentiment).sum() >= 5  # date-only headlines count on the next day
    run = backtest(episode, ["oracle"], settings=files_env).run_of("oracle")
    np.testing.assert_array_equal(run.positions > 0, np.nan_to_num(sentiment) > 0)


def test_stored_headlines_win_over_the_configured_ones_and_a_new_write_is_seen(synthetic_env):
    from stocker_core.text_events.configured import configured_text
    from stocker_core.text_events.store import replace_events
    from stocker_core.warehouse.db import Warehouse

    configured = configured_text(synthetic_env).news
    assert len(ticker_news("SYN1", synthetic_env)) == (configured["ticker"] == "SYN1").sum()
    warehouse = Warehouse(synthetic_env.warehouse_path)
    warehouse.ensure_schema()
    replace_events(warehouse, "macro", configured_text(synthetic_env).macro)
    assert ticker_news("SYN1", synthetic_env).empty  # stored text, but no SYN1 headline in it
    mine = configured.loc[configured["ticker"] == "SYN1"].iloc[:7]
    replace_events(warehouse, "news", mine)
    assert list(ticker_news("SYN1", synthetic_env)["headline"]) == list(mine["headline"])
    replace_events(warehouse, "news", mine.iloc[:3])
    assert len(ticker_news("SYN1", synthetic_env)) == 3


def test_stocker_backtest_plays_the_oracle_and_a_bad_span_is_a_clear_error(synthetic_env, monkeypatch):
    import json

    from typer.testing import CliRunner

    from stocker_core.cli import build_app
    from stocker_core.evaluation import commands as evaluation_cli

    app = build_app([evaluation_cli.commands])
    args = ["backtest", "--episode", "SYN1|2015-03-01", "--policies", "oracle,buy_and_hold", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = {row["policy"]: row for row in json.loads(result.output)["rows"]}
    assert set(rows) == {"oracle", "buy_and_hold"} and rows["oracle"]["trades"] > 2
    monkeypatch.setenv("STOCKER_SYNTH_START", "2100-01-01")
    get_settings(fresh=True)
    bad = CliRunner().invoke(app, args)
    monkeypatch.delenv("STOCKER_SYNTH_START")
    get_settings(fresh=True)  # leave no impossible settings cached for later tests
    assert bad.exit_code == 2 and "error: the synthetic market 2100-01-01" in bad.output
    assert "STOCKER_SYNTH_START" in bad.output
