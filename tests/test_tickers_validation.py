"""Issue 11 item 6: only tickers the source has enter the universe; remove drops the partition."""

from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from stocker_assets import pipeline_cli
from stocker_core.cli import build_app
from stocker_core.config import SAMPLE_UNIVERSE, Settings
from stocker_core.errors import UnknownTickerError
from stocker_core.market.sample_source import SampleSource
from stocker_core.market.sources import check_symbols

runner = CliRunner()


@pytest.fixture
def app():
    return build_app([pipeline_cli.register])


@pytest.fixture
def sample_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.delenv("STOCKER_FILES_DIR", raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    return Settings()


def test_check_symbols_names_the_typo_and_a_suggestion():
    source = SampleSource()
    assert check_symbols(source, ["AAPL", "MSFT"]) == ["AAPL", "MSFT"]
    with pytest.raises(UnknownTickerError, match=r"APPL.*did you mean AAPL\?"):
        check_symbols(source, ["MSFT", "APPL"])


def test_tickers_add_refuses_what_the_source_lacks(app, sample_env):
    result = runner.invoke(app, ["tickers", "add", "MSFT", "TSLA"])
    assert result.exit_code == 2, result.output
    assert "TSLA" in result.output and "sample source" in result.output
    assert not sample_env.universe_path.exists()  # nothing written, not even MSFT


def test_materialize_typo_never_reaches_the_universe(app, sample_env):
    result = runner.invoke(app, ["materialize", "-t", "APPL", "--groups", "market"])
    assert result.exit_code == 2 and "did you mean AAPL?" in result.output
    assert not sample_env.universe_path.exists()
    assert runner.invoke(app, ["tickers", "list"]).output.split() == list(SAMPLE_UNIVERSE)


def test_readme_tickers_example_works_on_the_sample_source(app, sample_env):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("stocker tickers add "))
    args = line.split("#")[0].split()[1:]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


def test_tickers_remove_drops_the_dagster_partition(app, sample_env):
    assert runner.invoke(app, ["tickers", "add", "AAPL", "MSFT"]).exit_code == 0
    with dg.DagsterInstance.get() as instance:
        assert {"AAPL", "MSFT"} <= set(instance.get_dynamic_partitions("ticker"))
    result = runner.invoke(app, ["tickers", "remove", "MSFT"])
    assert result.exit_code == 0, result.output
    assert sample_env.universe_path.read_text().split() == [*SAMPLE_UNIVERSE, "AAPL"]
    with dg.DagsterInstance.get() as instance:
        partitions = set(instance.get_dynamic_partitions("ticker"))
    assert "MSFT" not in partitions and "AAPL" in partitions


def test_the_sample_main_job_is_multi_ticker_over_a_stated_span(sample_env):
    assert sample_env.default_tickers[0] == "GOOGL" and len(sample_env.default_tickers) >= 10
    assert (sample_env.main_from, sample_env.main_to) == ("2014-06", "2018-08")
    check_symbols(SampleSource(), sample_env.default_tickers)  # every one is in the sample
    assert (
        Settings(source="files").default_tickers == ["GOOGL"] and Settings(source="files").main_from is None
    )
    assert Settings(default_tickers=["AAPL"], main_from="2010-01").default_tickers == ["AAPL"]
