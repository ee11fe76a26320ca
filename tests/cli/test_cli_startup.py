"""What makes `stocker episode info` start fast: no heavy imports, a cached calendar,
the sample source read without importing skfolio, symbols normalized on first read."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from stocker_core.market import calendar
from stocker_core.market.frames import normalize_bars
from stocker_core.market.sample_source import _load_sample_frames

HEAVY = ("dagster", "torch", "sklearn", "scipy", "skfolio", "matplotlib", "transformers")

PROBE = """
import json, sys
from typer.testing import CliRunner
from stocker_assets.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
heavy = [m for m in {heavy!r} if m in sys.modules]
layer = ("stocker_assets.definitions", "stocker_assets.engine")
dagster = sorted(m for m in sys.modules if m.split(".")[0].startswith("dagster") or m.startswith(layer))
loaded = sorted({{m.split(".")[0] for m in sys.modules}} | {{m for m in sys.modules if "stocker" in m}})
print(json.dumps({{"code": result.exit_code, "output": result.output, "heavy": heavy, "dagster": dagster,
                  "loaded": loaded}}))
"""


def _run_in_fresh_process(tmp_path: Path, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOCKER_", "DAGSTER_HOME"))}
    env.update(STOCKER_HOME=str(tmp_path / "home"), STOCKER_SOURCE="sample", XDG_CACHE_HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict]:
    """``_run_in_fresh_process`` once per command line for the module, each in a home of its
    own: the tests that read the same command read the same run (a process start each saved)."""
    runs: dict[tuple[str, ...], dict] = {}

    def run(*args: str) -> dict:
        if args not in runs:
            runs[args] = _run_in_fresh_process(tmp_path_factory.mktemp("probe"), *args)
        return runs[args]

    return run


@pytest.mark.parametrize(
    "args",
    [["--help"], ["tickers", "list"], ["episode", "info", "--episode", "GOOGL|2012-03-01", "--json"]],
)
def test_fast_commands_import_nothing_heavy(probed, args):
    probe = probed(*args)
    assert probe["code"] == 0, probe["output"]
    assert probe["heavy"] == []


@pytest.mark.parametrize("args", [["--help"], ["tickers", "list"]])
def test_commands_that_run_no_dagster_load_none_of_it(probed, args):
    """Not dagster, dagster_shared or any other dagster package, not the definitions or the
    engine; and neither pandas nor numpy, nor (for ``tickers list``) the composition root."""
    probe = probed(*args)
    assert probe["code"] == 0, probe["output"]
    assert probe["dagster"] == []
    assert not {"pandas", "numpy", "stocker_core.composition"} & set(probe["loaded"])


def test_tickers_add_registers_the_sources_itself(tmp_path):
    """The ``tickers`` group skips the callback's composition root; ``add`` reads the sources."""
    probe = _run_in_fresh_process(tmp_path, "tickers", "add", "GOOGL")
    assert probe["code"] == 0, probe["output"]
    assert "GOOGL" in probe["output"]


def test_episode_info_on_the_sample_gives_the_episode(probed):
    probe = probed("episode", "info", "--episode", "GOOGL|2012-03-01", "--json")
    info = json.loads(probe["output"])
    # March and April 2012: 22 + 20 NYSE sessions (Good Friday 2012-04-06 closed)
    assert (info["ticker"], info["trading_days"], info["source"]) == ("GOOGL", 42, "sample")


def test_calendar_is_cached_between_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calendar.exchange_calendar.cache_clear()
    try:
        built = calendar.exchange_calendar("XNYS")
        cache = tmp_path / "stocker" / "xnys-calendar.pickle"
        key, stored = pickle.loads(cache.read_bytes())
        assert key[0] == "XNYS" and key[2] == calendar.CALENDAR_START
        calendar.exchange_calendar.cache_clear()
        reloaded = calendar.exchange_calendar("XNYS")
        assert reloaded.sessions.equals(built.sessions)
        assert reloaded.closes.equals(built.closes)
        # 2023-11-24, the day after Thanksgiving: an early close at 13:00 New York (18:00 UTC)
        assert reloaded.closes[pd.Timestamp("2023-11-24")] == pd.Timestamp("2023-11-24 18:00", tz="UTC")
        cache.write_bytes(b"not a pickle")  # a damaged cache is rebuilt, not an error
        calendar.exchange_calendar.cache_clear()
        assert calendar.exchange_calendar("XNYS").sessions.equals(built.sessions)
        assert pickle.loads(cache.read_bytes())[0] == key
    finally:
        calendar.exchange_calendar.cache_clear()


def test_sample_frames_match_the_packages_own_loaders():
    from gym_anytrading.datasets import STOCKS_GOOGL
    from skfolio.datasets import load_sp500_dataset

    frames = _load_sample_frames()
    # 22 from the packages, 6 more from the reference tasks shipped in stocker_core/reference_tasks
    assert len(frames) == 28 and "^GSPC" in frames and {"INTC", "META", "GC=F"} <= set(frames)
    assert frames["GOOGL"].equals(normalize_bars(STOCKS_GOOGL))
    closes = load_sp500_dataset()
    expected = normalize_bars(pd.DataFrame({"date": closes.index, "close": closes["AAPL"]}))
    aapl = frames["AAPL"]
    assert (
        aapl.iloc[: len(expected)].reset_index(drop=True).equals(expected)
    )  # skfolio's closes to 2022-12-28
    assert str(aapl["date"].max().date()) == "2023-09-29"  # then task_easy's bars
