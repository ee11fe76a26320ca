"""The market, text, env and council groups run unchanged on the synthetic source:
two tickers × two months through Dagster, every asset of those groups."""

from __future__ import annotations

from datetime import date

import dagster as dg

from stocker_assets.definitions.council import specialist_votes
from stocker_assets.definitions.env import episodes, ideal_trajectories
from stocker_assets.definitions.market.assets import charts, indicators, prices
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_assets.definitions.text import forum_posts, macro_events, news
from stocker_core.baselines.oracle import oracle_long, ticker_news
from stocker_core.config import use_settings
from stocker_core.env.episode import load_episode
from stocker_core.evaluation.backtests import backtest
from stocker_core.market.calendar import month_sessions
from stocker_core.text_events.synthetic import NEWS_SOURCE
from stocker_core.warehouse import Warehouse

KEYS = [f"{ticker}|2015-{month}-01" for ticker in ("SYN1", "SYN2") for month in (11, 12)]


def test_market_text_env_and_council_assets_on_two_synthetic_tickers(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_CHARTS", "eager")  # every session's chart is drawn and counted below
    resource = StockerResource(
        home=str(tmp_path / "home"),
        source="synthetic",
        synth_tickers="2",
        synth_years=1.2,
        synth_start="2015-01-01",
        council_backend="rule",
    )
    settings = resource.settings()
    resources = {"stocker": resource}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["SYN1", "SYN2"])
        assert dg.materialize(
            [news, forum_posts, macro_events], instance=instance, resources=resources
        ).success
        for key in KEYS:
            result = dg.materialize(
                [prices, indicators, charts, episodes, ideal_trajectories, specialist_votes],
                instance=instance,
                resources=resources,
                partition_key=key,
            )
            assert result.success, key

    warehouse = Warehouse(settings.warehouse_path)
    sessions = len(month_sessions(date(2015, 11, 1))) + len(month_sessions(date(2015, 12, 1)))
    assert sessions == 42  # November 2015: 20 sessions, December: 22
    prices_rows = warehouse.query(
        "SELECT ticker, count(*) n FROM market.prices GROUP BY ticker ORDER BY ticker"
    )
    assert prices_rows.to_dict("list") == {"ticker": ["SYN1", "SYN2"], "n": [sessions, sessions]}
    stored_news = warehouse.query("SELECT DISTINCT ticker, source FROM text.news ORDER BY ticker")
    assert stored_news.to_dict("list") == {"ticker": ["SYN1", "SYN2"], "source": [NEWS_SOURCE] * 2}
    assert warehouse.query("SELECT count(*) n FROM text.macro_events")["n"].iloc[0] > 10
    stored_episodes = warehouse.query("SELECT key FROM env.episodes ORDER BY key")
    assert list(stored_episodes["key"]) == KEYS
    charted = warehouse.query("SELECT count(*) n FROM market.charts")["n"].iloc[0]
    assert charted == 2 * sessions
    votes = warehouse.query(
        "SELECT role, count(*) n, avg(confidence) c FROM council.votes WHERE ticker = 'SYN1' GROUP BY role"
    ).set_index("role")
    assert len(votes) == 7 and set(votes["n"]) == {sessions}
    for role in ("news", "forum_sentiment", "geopolitics", "peer_commodity", "indicator"):
        assert votes.loc[role, "c"] > 0, role  # every text and peer input is there to read

    # the oracle reads the stored headlines and plays an episode of this warehouse's settings
    with use_settings(settings):
        episode = load_episode(KEYS[0], settings)
        run = backtest(episode, ["oracle", "buy_and_hold"], settings=settings).run_of("oracle")
        wanted = oracle_long(ticker_news("SYN1", settings), episode.dates)
    assert (run.positions > 0).tolist() == wanted.tolist()
