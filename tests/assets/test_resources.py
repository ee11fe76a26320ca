"""Run configuration travels through StockerResource; Settings stays the home of defaults."""

from pathlib import Path

import dagster as dg

from stocker_assets.definitions.resources import RUN_FIELDS, StockerResource, default_resources
from stocker_assets.definitions.text import news
from stocker_core.config import Settings


def test_every_run_field_is_a_settings_field_and_a_resource_field():
    assert set(RUN_FIELDS) <= set(Settings.model_fields)
    assert set(RUN_FIELDS) == set(StockerResource.model_fields)


def test_default_resource_shows_every_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "openai")
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    resource = default_resources()["stocker"]
    assert resource.council_backend == "openai" and resource.home == str(tmp_path)
    assert resource.council_workers == Settings.model_fields["council_workers"].default
    assert all(getattr(resource, f) is not None for f in RUN_FIELDS if getattr(Settings(), f) is not None)


def test_resource_fields_win_over_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "openai")
    monkeypatch.setenv("STOCKER_SOURCE", "yfinance")
    settings = StockerResource(home=str(tmp_path), council_backend="rule", chart_workers=2).settings()
    assert settings.council_backend == "rule" and settings.chart_workers == 2
    assert settings.source == "yfinance"  # unset fields still come from STOCKER_* variables
    assert settings.home == tmp_path


def test_text_assets_read_the_resource_text_dir(tmp_path, seed_dir):
    resource = StockerResource(home=str(tmp_path / "home"), text_dir=str(seed_dir))
    result = dg.materialize([news], resources={"stocker": resource})
    meta = result.asset_materializations_for_node("news")[0].metadata
    assert meta["rows_written"].value == 25
    assert Path(meta["folder"].value).resolve() == seed_dir.resolve()  # the seed folder may be a link


def test_library_code_sees_the_run_settings_during_a_step(tmp_path, monkeypatch):
    """Policy factories and loaders call get_settings(): inside a run it is the resource's."""
    from stocker_core.config import get_settings

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "env_home"))
    seen = {}

    @dg.asset
    def probe(stocker: StockerResource) -> None:
        seen["home"] = get_settings().home

    assert dg.materialize([probe], resources={"stocker": StockerResource(home=str(tmp_path / "run"))}).success
    assert seen["home"] == tmp_path / "run"
    assert get_settings(fresh=True).home == tmp_path / "env_home"  # restored after the step
