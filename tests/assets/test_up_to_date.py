"""`stocker materialize` skips what is up to date: a rerun with nothing changed runs nothing
and rewrites nothing; one new session rebuilds only the months that read it; a changed
setting or ``--force`` rebuilds; every decision is in ``meta.builds`` and on the assets in
Dagster. Also the pieces: derived code versions, the settings fingerprint, the weekly cut."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from stocker_assets.definitions.code_versions import module_closure, module_code_version
from stocker_assets.engine.up_to_date import month_offset, settings_fingerprint, weekly_cut
from stocker_core.config import Settings
from stocker_core.warehouse import Warehouse


def test_code_versions_follow_the_imports_of_the_asset_module() -> None:
    market = module_closure("stocker_assets.definitions.market.assets")
    assert "stocker_core.market.indicators" in market
    assert "stocker_core.warehouse.partitioned" in market
    assert not [m for m in market if m.startswith(("stocker_core.moderator", "stocker_core.agent"))]
    training = module_closure("stocker_assets.definitions.training.moderator")
    assert "stocker_core.moderator.reward_regression" in training
    version = module_code_version("stocker_assets.definitions.market.assets")
    training_version = module_code_version("stocker_assets.definitions.training.moderator")
    assert len(version) == 16 and version != training_version


def test_the_settings_fingerprint_ignores_where_and_how_fast_not_what(tmp_path: Path) -> None:
    base = Settings(home=tmp_path / "a")
    same = settings_fingerprint(base, False)
    assert (
        settings_fingerprint(base.model_copy(update={"home": tmp_path / "b", "main_workers": 3}), False)
        == same
    )
    assert settings_fingerprint(base.model_copy(update={"transaction_cost": 0.002}), False) != same
    assert settings_fingerprint(base, True) != same  # the training settings count for training


def test_more_synthetic_tickers_change_no_ticker_s_fingerprint(tmp_path: Path) -> None:
    """Growing the synthetic universe adds tickers; it changes neither the settings a partition
    is built with nor an existing ticker's bars and text (so only the new tickers build)."""
    from stocker_core.market.synthetic import SyntheticSpec, synthetic_market
    from stocker_core.text_events.synthetic import synthetic_text
    from stocker_core.warehouse.db import frame_version

    found = []
    for count in ("12", "15"):
        settings = Settings(home=tmp_path, source="synthetic", synth_tickers=count, synth_years=1)
        spec = SyntheticSpec.from_settings(settings)
        market, text = synthetic_market(spec), synthetic_text(spec)
        news = text.news[text.news["ticker"].isin(["SYN1", "SYN12"])].reset_index(drop=True)
        bars = [frame_version(market.bars[t].reset_index(drop=True)) for t in ("SYN1", "SYN12")]
        texts = [frame_version(news), frame_version(text.macro)]
        found.append((settings_fingerprint(settings, True), bars, texts))
    assert found[0] == found[1]


def test_the_weekly_cut_is_the_last_friday_on_or_before_the_last_bar() -> None:
    assert weekly_cut(date(2015, 12, 11)) == date(2015, 12, 11)  # a Friday
    assert weekly_cut(date(2015, 12, 10)) == date(2015, 12, 4)  # Thursday → the Friday before
    assert weekly_cut(date(2015, 12, 14)) == date(2015, 12, 11)  # Monday
    assert month_offset(date(2015, 12, 1), 1) == date(2016, 1, 1)
    assert month_offset(date(2015, 1, 1), -13) == date(2013, 12, 1)


def _checksums(home: Path) -> dict[str, tuple[str, int]]:
    """{Parquet file: (sha256, mtime_ns)} of the warehouse's partitions."""
    return {
        str(p.relative_to(home)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(home.rglob("*.parquet"))
    }


@pytest.mark.slow
def test_reruns_skip_what_is_up_to_date_and_a_new_session_rebuilds_its_months(tmp_path, monkeypatch):
    from stocker_assets import pipeline_cli
    from stocker_core.cli import build_app

    app = build_app([pipeline_cli.commands])
    home = tmp_path / "home"
    for name, value in {
        "STOCKER_HOME": str(home),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "STOCKER_SOURCE": "synthetic",
        "STOCKER_SYNTH_TICKERS": "2",
        "STOCKER_SYNTH_YEARS": "1.5",
        "STOCKER_SYNTH_START": "2015-01-01",
        "STOCKER_CLOCK": "2015-12-09T22:00:00Z",  # a Wednesday, after the close
    }.items():
        monkeypatch.setenv(name, value)
    args = ["materialize", "-t", "SYN1", "--from", "2015-10", "--to", "2015-12"]
    args += ["--groups", "market,env,text,council", "--skip", "charts"]

    def run(*extra: str) -> str:
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        return result.output

    first = run()
    assert "up to date" not in first
    built = _checksums(home)
    assert len(built) > 12

    again = run()  # nothing changed: nothing runs, nothing is rewritten
    assert "4 of 4 part(s) of the job up to date, skipped" in again
    assert _checksums(home) == built
    warehouse = Warehouse(home / "stocker.duckdb")
    decisions = warehouse.query("SELECT decision, count(*) n FROM meta.builds GROUP BY decision")
    skipped = 3 + 5 * 3  # three text assets; five partitioned assets (charts skipped) × three months
    assert decisions.set_index("decision")["n"].to_dict() == {"skipped": skipped}
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        observed = instance.fetch_observations(dg.AssetKey("specialist_votes"), limit=5).records
    assert observed and "skipped: up to date" in str(observed[0].asset_observation.metadata["decision"].value)

    monkeypatch.setenv("STOCKER_CLOCK", "2015-12-10T22:00:00Z")  # one new session
    later = run()
    # the new session is read by December and by November's two-month episode; October is kept
    assert "SYN1 2015-11…2015-12 (2 of 3 months" in later, later
    after = _checksums(home)
    october = [p for p in built if "2015-10" in p]
    assert october and all(after[p] == built[p] for p in october)
    december = warehouse.query("SELECT count(*) n FROM market.prices WHERE date >= '2015-12-01'")["n"].iloc[0]
    assert december == 8  # 1 … 10 December: eight sessions

    monkeypatch.setenv("STOCKER_TRANSACTION_COST", "0.002")  # a setting the episodes read
    changed = run()
    assert "up to date" not in changed and "stage 1: SYN1 2015-10…2015-12 (3 months)" in changed
    rebuilt = _checksums(home)
    # every October partition rewritten (the vote cache keeps votes it already has by key)
    assert all(rebuilt[p][1] != after[p][1] for p in october if "/votes/" not in p)

    forced = run("--force")  # nothing changed, but asked for
    assert "up to date" not in forced and "stage 1: SYN1 2015-10…2015-12 (3 months)" in forced
