"""Dagster's own `dg` tools work on the project as it is laid out."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dg(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    dg = shutil.which("dg")
    if dg is None:
        pytest.fail("dg is not installed: `pip install -e '.[dev]'` brings dagster-dg-cli")
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "STOCKER_HOME": str(tmp_path / "home")}
    return subprocess.run([dg, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


def test_dg_check_defs(tmp_path):
    result = _dg(tmp_path, "check", "defs")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All definitions loaded successfully" in result.stdout


def test_dg_list_defs_shows_assets_and_the_run_resource(tmp_path):
    result = _dg(tmp_path, "list", "defs", "--json")
    assert result.returncode == 0, result.stderr
    defs = json.loads(result.stdout)
    assets = {a["asset_key"]: a for a in defs["assets"]}
    assert {"prices", "indicators", "charts", "episodes", "specialist_votes"} <= set(assets)
    assert assets["indicators"]["group_name"] == "market"
    assert {"name": "stocker", "type": "stocker_assets.definitions.resources.StockerResource"} in defs[
        "resources"
    ]
