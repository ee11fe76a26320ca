"""The suite does not depend on the calling shell (issue 52: with ``STOCKER_FILES_DIR`` set, as
anyone using the files source has, ``test_sample_source_reads_the_shipped_text`` failed). A
sample of the suite runs in a fresh pytest with hostile values set and passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hermetic_env

TESTS = Path(__file__).resolve().parents[1]
SAMPLE = [
    "tests/env/test_reference_tasks.py::test_sample_source_reads_the_shipped_text",
    "tests/cli/test_settings_errors.py::test_a_month_setting_is_read_as_its_first_day",
    "tests/cli/test_settings_spelling.py",
    "tests/cli/test_cli_startup.py::test_episode_info_on_the_sample_gives_the_episode",
    "tests/cli/test_inverted_range.py",
]
"""Tests that read the settings, the sample source, the CLI and a child process."""


def hostile_shell(tmp_path: Path) -> dict[str, str]:
    """A user's shell set for other work: the files source over a missing folder, the online
    source, another home, a Dagster instance that does not exist, settings out of range."""
    return {
        "STOCKER_FILES_DIR": "/nonexistent",
        "STOCKER_TEXT_DIR": "/nonexistent",
        "STOCKER_SOURCE": "yfinance",
        "STOCKER_HOME": str(tmp_path / "not-the-tests-home"),
        "DAGSTER_HOME": "/nonexistent",
        "STOCKER_START_MONTH": "2016-1",
        "STOCKER_SYNTH_TICKERS": "-1",
        "STOCKER_MAIN_WORKERS": "0",
        "STOCKER_CLOCK": "2010-01-04T00:00:00+00:00",
        "OPENAI_API_KEY": "sk-from-the-shell",
    }


def test_a_sample_of_the_suite_passes_in_a_hostile_shell(tmp_path: Path) -> None:
    env = {**os.environ, **hostile_shell(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *SAMPLE,
        ],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
    assert not (tmp_path / "not-the-tests-home").exists()


def test_the_shell_variables_are_named_and_the_test_knobs_kept() -> None:
    environ = {
        "STOCKER_FILES_DIR": "/x",
        "STOCKER_MODERATOR_SEED": "3",
        "DAGSTER_HOME": "/y",
        "OPENAI_API_KEY": "k",
        "STOCKER_WEB_SCREENSHOTS": "/shots",
        "PATH": "/bin",
    }
    cleared = hermetic_env.clear_calling_shell(environ)
    assert cleared == ["DAGSTER_HOME", "OPENAI_API_KEY", "STOCKER_FILES_DIR", "STOCKER_MODERATOR_SEED"]
    assert environ == {"STOCKER_WEB_SCREENSHOTS": "/shots", "PATH": "/bin"}


def test_this_run_sees_none_of_the_shell() -> None:
    # as the run began, after the clearing (tests later in a worker may set some for themselves)
    assert hermetic_env.LEFT == []
