"""``stocker materialize --from 2023-09 --to 2023-08`` exits 2 at once with a clear error and
touches nothing (issue 22, defect 9)."""

from __future__ import annotations

import time

import pytest
import typer
from typer.testing import CliRunner

from stocker_assets import pipeline_cli
from stocker_core.cli import build_app
from stocker_core.config import get_settings


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    return get_settings(fresh=True)


def _app() -> typer.Typer:
    return build_app([pipeline_cli.commands])


@pytest.mark.parametrize(
    ("start", "end"), [("2023-09", "2023-08"), ("2024-01", "2023-12"), ("2023-09-01", "2023-08-01")]
)
def test_an_inverted_range_exits_2_immediately(home, start, end):
    began = time.perf_counter()
    result = CliRunner().invoke(_app(), ["materialize", "-t", "GOOGL", "--from", start, "--to", end])
    assert result.exit_code == 2
    assert f"--from {start} is after --to {end}" in result.output
    assert time.perf_counter() - began < 5  # no definitions built, no run started
    assert not home.warehouse_path.exists() and not (home.home / "universe.txt").exists()


def test_a_single_month_range_is_not_inverted(home):
    pipeline_cli._check_range("2023-08", "2023-08")  # no exit
    pipeline_cli._check_range(None, "2023-08")
    pipeline_cli._check_range("2023-08", None)


@pytest.mark.parametrize("option", ["--from", "--to"])
@pytest.mark.parametrize("month", ["9999-01", "0001-01", "2018-13"])
def test_a_month_outside_the_supported_range_exits_2(home, option, month):
    result = CliRunner().invoke(_app(), ["materialize", "-t", "GOOGL", option, month])
    assert result.exit_code == 2, result.output
    assert month in result.output and "Traceback" not in result.output
    assert not home.warehouse_path.exists()
