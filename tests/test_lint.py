"""The code is ruff clean, and the boundary rule keeps dagster out of stocker_core."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
    )


def test_repository_is_ruff_clean():
    result = _ruff("stocker_core", "stocker_assets", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_dagster_import_in_core_is_a_lint_error():
    for line in ("import dagster", "from dagster import asset", "import dagster_shared.utils"):
        planted = _ruff("--stdin-filename", "stocker_core/env/planted.py", "-", stdin=line + "\n")
        assert planted.returncode == 1, line
        assert "TID251" in planted.stdout and "stocker_core never imports dagster" in planted.stdout


def test_dagster_import_in_the_dagster_layer_is_fine():
    allowed = _ruff(
        "--stdin-filename", "stocker_assets/definitions/assets/planted.py", "-", stdin="import dagster\n"
    )
    assert "TID251" not in allowed.stdout
