"""Issue 11 item 2: a partition whose prices fail the blocking check is never consumed."""

from datetime import date

import dagster as dg
import pandas as pd
import pytest
from typer.testing import CliRunner

from stocker_assets.definitions.market.assets import indicators, prices
from stocker_assets.definitions.market.checks import (
    ALLOW_FAILED_CHECKS_TAG,
    indicators_are_sane,
    prices_are_valid,
)
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.config import Settings
from stocker_core.market.bars import load_bars
from stocker_core.market.quality import DataQualityError
from stocker_core.market.source_builder import get_source
from stocker_core.warehouse import Warehouse

RANGE = {
    "dagster/asset_partition_range_start": "AAPL|2023-06-01",
    "dagster/asset_partition_range_end": "AAPL|2023-09-01",
}


@pytest.fixture
def bad_dir(tmp_path, seed_dir):
    """The seed fixture with AAPL's 2023-08-10 high below its low."""
    bars = pd.read_csv(seed_dir / "prices.csv")
    bars.loc[(bars["ticker"] == "AAPL") & (bars["date"] == "2023-08-10"), "high"] = 1.0
    folder = tmp_path / "bad"
    folder.mkdir()
    bars.to_csv(folder / "prices.csv", index=False)
    return folder


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        inst.add_dynamic_partitions(ticker_partitions.name, ["AAPL"])
        yield inst


def _run(instance, resource, tags=None):
    return dg.materialize(
        [prices, indicators, prices_are_valid, indicators_are_sane],
        instance=instance,
        resources={"stocker": resource},
        tags={**RANGE, **(tags or {})},
        raise_on_error=False,
    )


def _months(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["date"].dt.strftime("%Y-%m").unique())


def test_failed_partition_blocks_downstream_and_is_named(instance, tmp_path, bad_dir):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(bad_dir))
    result = _run(instance, resource)
    assert not result.success  # the blocking check failed the run
    evaluation = next(e for e in result.get_asset_check_evaluations() if e.check_name == "prices_are_valid")
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.metadata["failed_partitions"].value == ["AAPL|2023-08-01"]
    problems = evaluation.metadata["problems"].value
    assert "AAPL|2023-08-01" in problems and "high below low on 2023-08-10" in problems
    assert not result.asset_materializations_for_node("indicators")  # blocked by Dagster
    warehouse = Warehouse(resource.settings().warehouse_path)
    assert _months(warehouse.read_prices("AAPL")) == ["2023-06", "2023-07", "2023-09"]  # quarantined
    assert warehouse.read_table("market.indicators", "AAPL").empty
    # every later reader refuses the month too: no fallback to the source's bad rows
    with pytest.raises(DataQualityError, match=r"AAPL\|2023-08-01.*high below low"):
        get_source(resource.settings()).fetch("AAPL", date(2023, 8, 1), date(2023, 9, 1))
    with pytest.raises(DataQualityError, match=r"AAPL\|2023-08-01"):
        load_bars(resource.settings(), "AAPL", date(2023, 8, 1), date(2023, 9, 1))


def test_override_builds_clean_months_only(instance, tmp_path, bad_dir):
    resource = StockerResource(home=str(tmp_path / "home"), source="files", files_dir=str(bad_dir))
    result = _run(instance, resource, tags={ALLOW_FAILED_CHECKS_TAG: "true"})
    assert result.success
    evaluation = next(e for e in result.get_asset_check_evaluations() if e.check_name == "prices_are_valid")
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    warehouse = Warehouse(resource.settings().warehouse_path)
    # June and July are clean (their lookback ends before August); September's lookback has August
    assert _months(warehouse.read_table("market.indicators", "AAPL")) == ["2023-06", "2023-07"]
    meta = result.asset_materializations_for_node("indicators")[0].metadata
    assert "AAPL|2023-09-01" in meta["skipped_partitions"].value
    assert "AAPL|2023-08-01" in meta["skipped_partitions"].value


def test_corrections_file_fixes_the_value(instance, tmp_path, bad_dir, seed_dir):
    home = tmp_path / "home"
    home.mkdir()
    seed = pd.read_csv(seed_dir / "prices.csv")
    good_high = seed.loc[(seed["ticker"] == "AAPL") & (seed["date"] == "2023-08-10"), "high"].iloc[0]
    (home / "corrections.csv").write_text(
        f"ticker,date,column,value,reason\nAAPL,2023-08-10,high,{good_high},typo in vendor file\n"
    )
    resource = StockerResource(home=str(home), source="files", files_dir=str(bad_dir))
    result = _run(instance, resource)
    assert result.success
    stored = Warehouse(resource.settings().warehouse_path).read_prices("AAPL").set_index("date")
    assert stored.loc["2023-08-10", "high"] == pytest.approx(good_high)
    assert _months(stored.reset_index()) == ["2023-06", "2023-07", "2023-08", "2023-09"]


def test_cli_materialize_exits_1_and_names_the_partition(tmp_path, bad_dir, monkeypatch):
    from stocker_assets import pipeline_cli
    from stocker_core.cli import build_app

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(bad_dir))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    app = build_app([pipeline_cli.commands])
    args = ["materialize", "-t", "AAPL", "--from", "2023-07", "--to", "2023-08", "--groups", "market"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "AAPL|2023-08-01" in result.output and "high below low on 2023-08-10" in result.output
    assert "--allow-failed-checks" in result.output
    allowed = CliRunner().invoke(app, [*args, "--allow-failed-checks"])
    assert allowed.exit_code == 0, allowed.output
    assert "AAPL|2023-08-01" in allowed.output and "excluded" in allowed.output
    settings = Settings()
    assert _months(Warehouse(settings.warehouse_path).read_table("market.indicators", "AAPL")) == ["2023-07"]
