"""A partial failure in a batch fails only its partitions and says which (issue 49): three
tickers run as one batch, the middle one with a month whose prices fail their blocking check."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from stocker_core.config import Settings
from stocker_core.warehouse import Warehouse


@pytest.mark.slow
def test_a_bad_month_in_a_batch_fails_only_its_ticker_and_is_named(tmp_path, seed_dir, monkeypatch):
    from stocker_assets import pipeline_cli
    from stocker_core.cli import build_app

    bad = tmp_path / "bad"
    shutil.copytree(seed_dir, bad)
    bars = pd.read_csv(bad / "prices.csv")
    bars.loc[(bars["ticker"] == "INTC") & (bars["date"] == "2023-08-10"), "high"] = 1.0
    twin = bars[bars["ticker"] == "AAPL"].assign(ticker="AAPX")  # a third ticker with 2023 bars
    pd.concat([bars, twin]).to_csv(bad / "prices.csv", index=False)
    for name, value in {
        "STOCKER_SOURCE": "files",
        "STOCKER_FILES_DIR": str(bad),
        "STOCKER_MAIN_WORKERS": "1",
        "STOCKER_HOME": str(tmp_path / "home"),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
    }.items():
        monkeypatch.setenv(name, value)
    app = build_app([pipeline_cli.commands])
    args = ["materialize", "-t", "AAPL", "-t", "INTC", "-t", "AAPX", "--from", "2023-07", "--to", "2023-09"]
    args += ["--groups", "market,env", "--skip", "charts"]

    result = CliRunner().invoke(app, args)
    assert "stage 1: 3 tickers AAPL…AAPX 2023-07…2023-09 (9 ticker-months, 1 run(s))" in result.output
    assert result.exit_code == 1, result.output
    assert "INTC|2023-08-01: high below low on 2023-08-10" in result.output
    assert "INTC failed blocking checks; the batch's other tickers ran again without them" in result.output
    warehouse = Warehouse(Settings().home / "stocker.duckdb")
    episodes = warehouse.query("SELECT ticker, strftime(month, '%Y-%m') AS month FROM env.episodes")
    built = set(zip(episodes["ticker"], episodes["month"], strict=True))
    for ticker in ("AAPL", "AAPX"):
        assert {(ticker, m) for m in ("2023-07", "2023-08", "2023-09")} <= built, sorted(built)
    assert not [b for b in built if b[0] == "INTC"], sorted(built)  # its stage failed: none of its episodes
    builds = warehouse.query(
        "SELECT partition FROM meta.builds WHERE decision = 'built' AND asset = 'episodes'"
    )
    assert {p.split("|")[0] for p in builds["partition"]} == {"AAPL", "AAPX"}

    again = CliRunner().invoke(app, args)  # the clean tickers are up to date: INTC alone runs again
    assert again.exit_code == 1, again.output
    label = "stage 1: 3 tickers AAPL…AAPX 2023-07…2023-09 (3 ticker-months, 1 run(s)); 2 up to date"
    assert label in again.output and "INTC: env_job (episodes, ideal_trajectories) not run" in again.output
