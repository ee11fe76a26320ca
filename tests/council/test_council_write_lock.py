"""Short write locks: a slow council never blocks another process's reads and writes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from datetime import date

import pytest
from typer.testing import CliRunner

from stocker_core.config import get_settings
from stocker_core.council.backends import VoteResult
from stocker_core.council.cache import VoteCache
from stocker_core.council.models import SpecialistVote
from stocker_core.council.partition import ticker_votes
from stocker_core.market.files_source import FilesSource
from stocker_core.warehouse.db import Warehouse, WarehouseBusyError

MONTH = date(2023, 8, 1)
DAYS = 4
VOTE_SECONDS = 0.25
MAX_READ_SECONDS = 2.5  # the old code waited for the whole ~7 s vote loop (3.7 s measured)

# Another process: `episode info` of the stored episode, then reads and writes in a loop
# (each timed) until the parent drops a stop file. Prints JSON on stdout.
OTHER_PROCESS = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from stocker_core.composition import register_all
    from stocker_core.env.commands import episode_info
    from stocker_core.warehouse.db import Warehouse

    register_all()  # as every program that reads a source does
    path, stop = Path(sys.argv[1]), Path(sys.argv[2])
    warehouse = Warehouse(path)
    info = episode_info("AAPL|2023-08-01")
    print("ready", flush=True)
    seconds, counts = [], []
    while not stop.exists():
        t0 = time.monotonic()
        counts.append(int(warehouse.query("SELECT count(*) AS n FROM council.votes")["n"].iloc[0]))
        warehouse.record_lineage([{"asset": "probe", "partition": "p", "run_id": "r",
                                   "code_version": "", "data_version": "v", "row_count": 0}])
        seconds.append(time.monotonic() - t0)
        time.sleep(0.05)
    print(json.dumps({"trading_days": info["trading_days"], "seconds": seconds, "counts": counts}))
    """
)


class SlowStubLLM:
    """An in-process stand-in for an LLM backend: every vote takes VOTE_SECONDS."""

    name = "stub-llm"
    model_id = "stub-1"
    io_bound = True

    def prompt_version(self, role: str) -> str:
        return "p1"

    def vote(self, role: str, ctx) -> VoteResult:
        time.sleep(VOTE_SECONDS)
        return VoteResult(SpecialistVote(role=role, signal=0.1, confidence=0.5, rationale="stub"))


@pytest.fixture
def stored_days(files_env) -> Warehouse:
    """A warehouse holding AAPL's first DAYS sessions of 2023-08 (from the seed fixture)."""
    warehouse = Warehouse(files_env.warehouse_path)
    bars = FilesSource(files_env.files_dir).fetch("AAPL", date(2023, 3, 1), date(2023, 10, 1))
    history = bars[bars["date"] < "2023-08-01"]
    months = sorted({d.date().replace(day=1) for d in history["date"]})
    warehouse.replace_months("market.prices", "AAPL", months, history)
    warehouse.replace_months("market.prices", "AAPL", [MONTH], bars[bars["date"] >= "2023-08-01"].head(DAYS))
    VoteCache(warehouse).ensure_table()
    return warehouse


@pytest.mark.slow
def test_slow_council_and_another_process_both_succeed(stored_days, tmp_path):
    stop = tmp_path / "stop"
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER_PROCESS, str(stored_days.path), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline().strip() == "ready", other.stderr.read()
        run = ticker_votes(get_settings(), stored_days, SlowStubLLM(), "AAPL", [MONTH], workers=2)
    finally:
        stop.touch()
        out, err = other.communicate(timeout=120)
    assert other.returncode == 0, err  # no lock error, no traceback
    report = json.loads(out.strip().splitlines()[-1])
    assert report["trading_days"] > 0  # episode info ran while the council was voting
    assert run is not None and len(run.votes) == 7 * DAYS and run.stats["misses"] == 7 * DAYS
    assert len(VoteCache(stored_days).votes_for("AAPL", run.votes["date"].unique())) == 7 * DAYS
    # the other process never waited for the whole vote loop (~3.5 s): each read+write was short,
    assert len(report["seconds"]) >= 5 and max(report["seconds"]) < MAX_READ_SECONDS, report["seconds"]
    # and it saw votes land while the council was still running (short transactions)
    assert any(0 < n < 7 * DAYS for n in report["counts"]), report["counts"]


HOLD_LOCK = textwrap.dedent(
    """
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def test_lock_held_too_long_is_a_clear_error_not_a_traceback(stored_days, monkeypatch):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(stored_days.path), "20"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        # partitioned tables are Parquet files: reading them never waits for the file's lock
        assert len(Warehouse(stored_days.path, lock_wait=1.0).read_prices("AAPL")) > DAYS
        started = time.monotonic()
        with pytest.raises(WarehouseBusyError, match=r"another process \(.*, PID \d+\); waited 1 s"):
            Warehouse(stored_days.path, lock_wait=1.0).query("SELECT count(*) FROM meta.lineage")
        assert time.monotonic() - started < 5
        # the CLI prints the message and exits non-zero, no traceback

        from stocker_core.cli import build_app
        from stocker_core.env import commands as env_cli

        monkeypatch.setattr("stocker_core.warehouse.db.LOCK_WAIT_SECONDS", 1.0)
        app = build_app([env_cli.commands])
        result = CliRunner().invoke(app, ["episode", "info", "--episode", "AAPL|2023-08-01"])
        assert result.exit_code == 2, result.output
        assert "error: the warehouse" in result.output and "locked by another process" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
    finally:
        holder.kill()
        holder.wait()


def test_votes_are_written_while_computing(stored_days):
    """Without waiting for the end: a flush after every vote stores them one by one."""
    from stocker_core.council.voting import run_votes
    from stocker_core.decision_context.decision import load_council_inputs

    settings = get_settings()
    inputs = load_council_inputs("AAPL", MONTH, date(2023, 8, 31), settings=settings)
    days = [d for d in stored_days.read_prices("AAPL", MONTH)["date"]][:2]
    seen: list[int] = []
    cache = VoteCache(stored_days)

    def progress(done: int, total: int) -> None:
        seen.append(len(cache.votes_for("AAPL", days)))

    run_votes(
        "AAPL",
        days,
        inputs.context,
        SlowStubLLM(),
        cache,
        roles=("news", "indicator"),
        max_workers=1,
        progress=progress,
        write_every_seconds=0.0,
    )
    assert seen == [1, 2, 3, 4]  # each vote stored before the next is computed
