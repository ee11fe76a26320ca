"""The `stocker` console script: tickers and the main job."""

import dagster as dg
from typer.testing import CliRunner

from stocker_assets.cli import app
from stocker_core.warehouse import Warehouse

runner = CliRunner()


def test_tickers_add_list_remove(files_env):
    result = runner.invoke(app, ["tickers", "add", "MSFT", "NVDA"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["tickers", "list"]).output.split() == ["GOOGL", "MSFT", "NVDA"]
    with dg.DagsterInstance.get() as instance:
        assert set(instance.get_dynamic_partitions("ticker")) >= {"MSFT", "NVDA"}
    assert runner.invoke(app, ["tickers", "remove", "GOOGL"]).exit_code == 0
    assert files_env.universe_path.read_text().split() == ["MSFT", "NVDA"]


def test_bad_tickers_are_refused_and_nothing_written(files_env):
    for bad in ["../etc", "A;DROP TABLE", "aapl", ""]:
        result = runner.invoke(app, ["tickers", "add", "MSFT", bad])
        assert result.exit_code == 2
        assert "invalid ticker" in result.output
    assert not files_env.universe_path.exists()


def test_materialize_backfills_a_ticker(files_env):
    # the data groups: three months are too few to split for evaluation and training
    args = ["materialize", "--ticker", "INTC", "--from", "2023-12", "--to", "2024-02"]
    result = runner.invoke(app, [*args, "--groups", "market,env,text,council"])
    assert result.exit_code == 0, result.output
    assert "INTC" in result.output and "3" in result.output
    stored = Warehouse(files_env.warehouse_path).read_prices("INTC")
    assert stored["date"].dt.strftime("%Y-%m").unique().tolist() == ["2023-12", "2024-01", "2024-02"]
    assert len(stored) == 20 + 21 + 20  # NYSE sessions: Dec 2023 (Christmas closed), Jan, Feb 2024


def test_materialize_unknown_ticker_is_a_clear_error(files_env):
    result = runner.invoke(app, ["materialize", "--ticker", "ZZZZ"])
    assert result.exit_code == 2 and "no symbol 'ZZZZ'" in result.output
