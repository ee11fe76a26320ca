"""The market, text, env and council groups run unchanged on the synthetic source."""

from __future__ import annotations

from datetime import date

import typer
from typer.testing import CliRunner

from stocker_assets import pipeline_cli
from stocker_core.config import get_settings
from stocker_core.env.episode import load_episode
from stocker_core.evaluation.oracle import oracle_long, ticker_news
from stocker_core.evaluation.runner import backtest
from stocker_core.market.calendar import month_sessions
from stocker_core.text.synthetic import NEWS_SOURCE
from stocker_core.warehouse import Warehouse


def test_materialize_market_text_env_council_on_two_synthetic_tickers(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("STOCKER_SOURCE", "synthetic")
    monkeypatch.setenv("STOCKER_SYNTH_TICKERS", "2")
    monkeypatch.setenv("STOCKER_SYNTH_YEARS", "1.2")
    (tmp_path / "dagster_home").mkdir()
    settings = get_settings(fresh=True)
    app = typer.Typer()
    pipeline_cli.register(app)
    args = ["materialize", "--from", "2015-11", "--to", "2015-12", "--groups", "market,text,env,council"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    print(result.output)
    assert "source synthetic" in result.output

    warehouse = Warehouse(settings.warehouse_path)
    prices = warehouse.query("SELECT ticker, count(*) n FROM market.prices GROUP BY ticker ORDER BY ticker")
    sessions = len(month_sessions(date(2015, 11, 1))) + len(month_sessions(date(2015, 12, 1)))
    assert sessions == 42  # November 2015: 20 sessions, December: 22
    assert prices.to_dict("list") == {"ticker": ["SYN1", "SYN2"], "n": [sessions, sessions]}
    news = warehouse.query("SELECT DISTINCT ticker, source FROM text.news ORDER BY ticker")
    assert news.to_dict("list") == {"ticker": ["SYN1", "SYN2"], "source": [NEWS_SOURCE] * 2}
    episodes = warehouse.query("SELECT key, trading_days FROM env.episodes ORDER BY key")
    assert list(episodes["key"]) == [f"SYN{i}|2015-{m}-01" for i in (1, 2) for m in (11, 12)]
    votes = warehouse.query(
        "SELECT role, count(*) n, avg(confidence) c FROM council.votes WHERE ticker = 'SYN1' GROUP BY role"
    ).set_index("role")
    assert len(votes) == 7 and set(votes["n"]) == {sessions}
    for role in ("news", "forum_sentiment", "geopolitics", "peer_commodity", "indicator"):
        assert votes.loc[role, "c"] > 0, role  # every text and peer input is there to read

    # the oracle reads the stored headlines and plays the materialized episode
    episode = load_episode("SYN1|2015-11-01", settings)
    assert episode.source == "synthetic"  # the warehouse lacks the history months: all from the source
    run = backtest(episode, ["oracle", "buy_and_hold"]).run_of("oracle")
    assert (run.positions > 0).tolist() == oracle_long(ticker_news("SYN1", settings), episode.dates).tolist()
