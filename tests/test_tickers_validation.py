"""Issue 11 item 6: only tickers the source has enter the universe; remove drops the partition."""

from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from stocker_assets import pipeline_cli
from stocker_core.cli import build_app
from stocker_core.config import Settings
from stocker_core.data_sources import SAMPLE_UNIVERSE
from stocker_core.errors import UnknownTickerError
from stocker_core.market.sample_source import SampleSource
from stocker_core.market.sources import check_symbols

runner = CliRunner()


@pytest.fixture
def app():
    return build_app([pipeline_cli.commands])


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


# issue 49: ``stocker tickers add --file`` — a list file, checked whole, written once or not at all

LIST = """# my universe
AAPL
MSFT   # a comment after a name

GOOGL
AAPL
"""


def test_a_list_file_gives_its_tickers_once_and_names_the_repeated_lines(tmp_path: Path):
    from stocker_core.universe import read_ticker_list

    path = tmp_path / "universe.txt"
    path.write_text(LIST)
    found = read_ticker_list(path)
    assert found.tickers == ["AAPL", "MSFT", "GOOGL"]
    assert found.duplicates == ["universe.txt:6: AAPL (again, first on line 2)"]
    path.write_text("\n".join(f"T{i}" for i in range(3000)))
    assert len(read_ticker_list(path).tickers) == 3000


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("../etc/passwd", "'../etc/passwd'"),
        ("A;DROP TABLE x", "'A;DROP TABLE x'"),
        ("aapl", "'aapl'"),
        ("A/B", "'A/B'"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_added(app, sample_env, tmp_path: Path, line: str, shown: str):
    path = tmp_path / "universe.txt"
    path.write_text(f"MSFT\n# fine so far\n{line}\nAAPL\n")
    result = runner.invoke(app, ["tickers", "add", "--file", str(path)])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.count("\n") == 0 and f"universe.txt:3: invalid ticker {shown}" in message
    assert not sample_env.universe_path.exists()  # not even MSFT


def test_a_list_file_with_a_symbol_the_source_lacks_adds_nothing(app, sample_env, tmp_path: Path):
    path = tmp_path / "universe.txt"
    path.write_text("MSFT\nTSLA\n")
    result = runner.invoke(app, ["tickers", "add", "-f", str(path)])
    assert result.exit_code == 2 and "TSLA" in result.output
    assert not sample_env.universe_path.exists()


@pytest.mark.parametrize("content", [b"\xff\xfeA\x00", b"# only comments\n\n"])
def test_a_file_that_is_no_list_is_one_line(app, sample_env, tmp_path: Path, content: bytes):
    path = tmp_path / "universe.txt"
    path.write_bytes(content)
    result = runner.invoke(app, ["tickers", "add", "--file", str(path)])
    assert result.exit_code == 2 and result.output.strip().count("\n") == 0, result.output
    assert not sample_env.universe_path.exists()


def test_a_list_file_is_added_in_one_write_and_duplicates_are_reported(app, sample_env, tmp_path: Path):
    path = tmp_path / "universe.txt"
    path.write_text(LIST)
    result = runner.invoke(app, ["tickers", "add", "--file", str(path), "JPM"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "duplicate: universe.txt:6: AAPL (again, first on line 2)" in result.output
    assert "already in the universe: JPM, GOOGL" in result.output
    assert "2 added" in result.output and "-t AAPL -t MSFT" in result.output
    stored = runner.invoke(app, ["tickers", "list"]).output.split()
    assert stored == [*SAMPLE_UNIVERSE, "AAPL", "MSFT"]
    with dg.DagsterInstance.get() as instance:
        assert {"AAPL", "MSFT"} <= set(instance.get_dynamic_partitions("ticker"))


def test_neither_tickers_nor_a_file_is_refused(app, sample_env):
    result = runner.invoke(app, ["tickers", "add"])
    assert result.exit_code == 2 and "--file" in result.output
