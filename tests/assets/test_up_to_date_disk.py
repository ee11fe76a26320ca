"""Day 2 asks the disk, not only its records (issue 52): on a home built by `stocker
materialize`, a rerun never calls a partition up to date whose Parquet file is gone, cut short,
replaced or turned into a folder; it moves a damaged file aside, rebuilds the partition, names
it in the summary and in ``meta.builds``, and never reads it into a traceback. A deleted model
file rebuilds its model; a month the source dropped is named and kept (never shrunk)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
from typer.testing import CliRunner

from stocker_core.config import Settings
from stocker_core.warehouse import Warehouse

SYNTHETIC = {
    "STOCKER_SOURCE": "synthetic",
    "STOCKER_SYNTH_TICKERS": "2",
    "STOCKER_SYNTH_YEARS": "1.5",
    "STOCKER_SYNTH_START": "2015-01-01",
    "STOCKER_MAIN_WORKERS": "1",
    "STOCKER_CHARTS": "auto",
}
ARGS = ["materialize", "-t", "SYN1", "--from", "2015-10", "--to", "2015-12", "--groups", "market,env"]
ARGS += ["--skip", "charts"]
PARTS = "stocker.parts"
PRICES = f"{PARTS}/market/prices/ticker=SYN1"


def _environment(patch: pytest.MonkeyPatch, root: Path, values: dict[str, str]) -> None:
    for name, value in {"STOCKER_HOME": str(root / "home"), "DAGSTER_HOME": str(root / "dagster")}.items():
        patch.setenv(name, value)
    for name, value in values.items():
        patch.setenv(name, value)


def _materialize(args: list[str] = ARGS):
    from stocker_assets import pipeline_cli
    from stocker_core.cli import build_app

    return CliRunner().invoke(build_app([pipeline_cli.commands]), args)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home (and its Dagster instance) built once: SYN1's market and env groups, 3 months."""
    root = tmp_path_factory.mktemp("built")
    with pytest.MonkeyPatch.context() as patch:
        _environment(patch, root, SYNTHETIC)
        result = _materialize()
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def home(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the built home (times kept), with the environment pointing at it."""
    shutil.copytree(built, tmp_path / "copy", symlinks=True)
    _environment(monkeypatch, tmp_path / "copy", SYNTHETIC)
    return tmp_path / "copy" / "home"


def _prices(home: Path) -> pd.DataFrame:
    return Warehouse(home / "stocker.duckdb").query("SELECT * FROM market.prices ORDER BY date")


def _rerun_repairs(home: Path, damage, said: str) -> str:
    """Damage November's prices with ``damage``, rerun: it must rebuild November only, name it,
    record why, and leave the prices as built."""
    before = _prices(home)
    damage(home / PRICES / "month=2015-11" / "part.parquet")
    result = _materialize()
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "up to date: skipped" not in result.output, result.output
    line = f"rebuilt prices SYN1|2015-11-01: {PRICES}/month=2015-11/part.parquet {said}"
    assert line in " ".join(result.output.split()), result.output
    pd.testing.assert_frame_equal(_prices(home), before)
    builds = Warehouse(home / "stocker.duckdb").query(
        "SELECT partition, reason FROM meta.builds WHERE asset = 'prices' AND decision = 'built'"
    )
    assert builds["partition"].tolist() == ["SYN1|2015-11-01"]
    assert "damaged on disk" in builds["reason"].iloc[0] and said in builds["reason"].iloc[0]
    again = _materialize()  # repaired: the next rerun skips everything
    assert again.exit_code == 0 and "1 of 1 part(s) of the job up to date" in again.output, again.output
    return result.output


@pytest.mark.slow
def test_a_deleted_partition_is_rebuilt_not_skipped(home: Path) -> None:
    _rerun_repairs(home, lambda p: p.unlink(), "is missing")


@pytest.mark.slow
def test_a_truncated_partition_is_named_moved_aside_and_rebuilt(home: Path) -> None:
    output = _rerun_repairs(home, lambda p: p.write_bytes(p.read_bytes()[:100]), "changed size")
    aside = list((home / "damaged").rglob("part.parquet"))
    assert len(aside) == 1 and aside[0].stat().st_size == 100 and "moved to damaged/" in output


@pytest.mark.slow
def test_variants_a_zero_byte_file_a_folder_and_another_valid_parquet(home: Path) -> None:
    """Three partitions damaged three ways, one rerun: each named, each rebuilt."""
    prices = _prices(home)
    other = home / PRICES / "month=2015-10" / "part.parquet"
    (home / PRICES / "month=2015-11" / "part.parquet").write_bytes(b"")
    december = home / PRICES / "month=2015-12" / "part.parquet"
    december.unlink()
    december.mkdir()
    episodes = home / PARTS / "env/episodes/ticker=SYN1/month=2015-11/part.parquet"
    shutil.copy(other, episodes)  # a valid Parquet file, of another table and month
    result = _materialize()
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    text = " ".join(result.output.split())
    assert f"rebuilt prices SYN1|2015-11-01: {PRICES}/month=2015-11/part.parquet changed size" in text
    december_said = f"{PRICES}/month=2015-12/part.parquet is no longer a regular file"
    assert f"rebuilt prices SYN1|2015-12-01: {december_said}" in text
    assert "rebuilt episodes SYN1|2015-11-01: stocker.parts/env/episodes" in text
    pd.testing.assert_frame_equal(_prices(home), prices)
    assert december.is_file()


@pytest.mark.slow
def test_a_deleted_table_folder_under_the_catalog_view_is_rebuilt(home: Path) -> None:
    """The whole of market.prices (what the catalog's view reads) removed: every month rebuilt,
    and the summary's row counts read it again."""
    prices = _prices(home)
    shutil.rmtree(home / PARTS / "market" / "prices")
    result = _materialize()
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "market.prices 64" in result.output, result.output
    pd.testing.assert_frame_equal(_prices(home), prices)


@pytest.mark.slow
def test_a_month_the_files_source_dropped_is_named_and_kept(tmp_path, seed_dir, monkeypatch) -> None:
    source = tmp_path / "files"
    shutil.copytree(seed_dir, source)
    values = {"STOCKER_SOURCE": "files", "STOCKER_FILES_DIR": str(source), "STOCKER_MAIN_WORKERS": "1"}
    _environment(monkeypatch, tmp_path, values)
    args = ["materialize", "-t", "INTC", "--from", "2023-07", "--to", "2023-09", "--groups", "market"]
    args += ["--skip", "charts"]
    assert _materialize(args).exit_code == 0
    stored = _prices(tmp_path / "home")
    bars = pd.read_csv(source / "prices.csv")
    dropped = (bars["ticker"] == "INTC") & bars["date"].astype(str).str.startswith("2023-08")
    bars[~dropped].to_csv(source / "prices.csv", index=False)
    result = _materialize(args)
    assert result.exit_code == 0, result.output
    august = int((stored["date"].astype(str).str.startswith("2023-08")).sum())
    text = " ".join(result.output.split())
    assert f"kept: the source no longer has INTC 2023-08; its {august} stored bar(s) stay" in text, text
    pd.testing.assert_frame_equal(_prices(tmp_path / "home"), stored)  # never shrunk


def test_a_deleted_model_file_rebuilds_its_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unpartitioned asset vouches for the files named by path in its materialization's
    metadata (a model folder): one gone, and its unit is no longer up to date."""
    from stocker_assets.definitions.build import build_definitions
    from stocker_assets.definitions.resources import StockerResource
    from stocker_assets.engine.runner import TickerRun
    from stocker_assets.engine.stages import RunUnit
    from stocker_assets.engine.up_to_date import UpToDate

    _environment(monkeypatch, tmp_path, SYNTHETIC)
    settings = Settings()
    folder = settings.home / "models" / "moderator_grpo"
    folder.mkdir(parents=True)
    (folder / "adapter_model.safetensors").write_bytes(b"\x08" + b"\x00" * 7 + b"{}" + b"\x01" * 64)
    (folder / "adapter_config.json").write_text("{}")
    defs = build_definitions({"stocker": StockerResource()})
    source = StockerResource().market_source()
    warehouse = Warehouse(settings.warehouse_path)
    unit = RunUnit("moderator_grpo", "moderator_grpo", ("moderator_grpo",), 1)
    with dg.DagsterInstance.ephemeral() as instance:
        instance.report_runless_asset_event(
            dg.AssetMaterialization("moderator_grpo", metadata={"path": dg.MetadataValue.path(str(folder))})
        )

        def decide():
            planner = UpToDate(defs, settings, source, warehouse, [], instance=instance)
            return planner, planner.decide(unit)

        planner, first = decide()
        assert first.run and first.reason == "never built"
        planner.record(unit, first, TickerRun("moderator_grpo", 0, "run", True, 1.0, []))
        assert not decide()[1].run  # nothing changed: skipped
        (folder / "adapter_model.safetensors").unlink()
        planner, third = decide()
        assert third.run and third.reason == "files damaged on disk"
        assert "models/moderator_grpo/adapter_model.safetensors is missing" in third.damaged[""]
        assert planner.disk_report() == [
            "rebuilt moderator_grpo: models/moderator_grpo/adapter_model.safetensors is missing"
        ]


@pytest.mark.slow
def test_a_home_built_before_outputs_were_recorded_finds_a_deleted_partition(home: Path) -> None:
    """No ``meta.outputs`` yet (a home from before it): ``meta.lineage``'s row counts say the
    part file should be there; the rerun rebuilds it and records every file."""
    warehouse = Warehouse(home / "stocker.duckdb")
    with warehouse.transaction() as con:
        con.execute("DELETE FROM meta.outputs")
    _rerun_repairs(home, lambda p: p.unlink(), "is missing (meta.lineage records")
    assert warehouse.query("SELECT count(*) n FROM meta.outputs")["n"].iloc[0] >= 12
