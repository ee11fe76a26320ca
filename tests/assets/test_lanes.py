"""The main job's runs as units on lanes: each waits only for what it reads, and two lanes
build what one builds."""

from datetime import date

import pandas as pd
import pytest
from typer.testing import CliRunner

from stocker_assets.definitions.location import defs
from stocker_assets.engine import lanes
from stocker_assets.engine.lanes import (
    LaneOptions,
    RunUnit,
    plan_units,
    priority_order,
    run_units,
    worker_count,
)
from stocker_assets.engine.runner import TickerRun
from stocker_assets.engine.stages import plan_stages
from stocker_assets.pipeline_cli import DEFAULT_GROUPS
from stocker_core.config import Settings
from stocker_core.warehouse import Warehouse

MONTHS = [date(2018, 6, 1), date(2018, 7, 1)]


@pytest.fixture
def units() -> dict[str, RunUnit]:
    # the main job's assets: its default groups (the forward ledger runs on its own schedule)
    groups = set(DEFAULT_GROUPS.split(","))
    main_job = [a for a in defs.assets if set(a.group_names_by_key.values()) <= groups]
    planned = plan_units(plan_stages(main_job), {"GOOGL": MONTHS, "JPM": MONTHS, "EMPTY": []})
    return {u.name: u for u in planned}


def test_units_wait_only_for_what_they_read(units):
    assert "EMPTY@1" not in units and "EMPTY@2" not in units  # no months, no runs
    assert units["GOOGL@1"].deps == {"news", "forum_posts", "macro_events"}
    assert units["GOOGL@1"].months == tuple(MONTHS) and units["GOOGL@1"].ticker == "GOOGL"
    assert units["splits"].deps == {"GOOGL@1", "JPM@1"}  # reads every ticker's prices
    assert units["moderator_grpo"].deps == {"moderator_sft"}
    assert units["agent_policy"].deps == {"splits", "news", "forum_posts", "GOOGL@1", "JPM@1"}
    # a ticker's backtests wait for its own votes and every model, not for the other ticker
    assert units["GOOGL@2"].deps == {
        "GOOGL@1",
        "agent_policy",
        "drl_agents",
        "moderator_base",
        "moderator_sft",
        "moderator_grpo",
    }
    assert "rolling_evaluation" not in units["GOOGL@2"].deps  # so they run side by side
    assert units["evaluation_report"].deps == {"GOOGL@2", "JPM@2", "rolling_evaluation", "splits"}
    assert units["GOOGL@1"].label == "stage 1: GOOGL 2018-06…2018-07 (2 months)"


def test_a_free_lane_takes_what_unblocks_the_most(units):
    order = [u.name for u in priority_order(list(units.values()))]
    assert order.index("moderator_base") < min(order.index("agent_policy"), order.index("drl_agents"))
    assert order.index("moderator_base") < order.index("moderator_sft") < order.index("moderator_grpo")
    assert order.index("rolling_evaluation") < order.index("GOOGL@2")  # the long one first
    assert order[-1] == "evaluation_report"


def test_worker_count(monkeypatch):
    monkeypatch.delenv("STOCKER_MAIN_WORKERS")
    monkeypatch.setattr(lanes.os, "cpu_count", lambda: 2)
    assert worker_count(Settings()) == 2
    monkeypatch.setattr(lanes.os, "cpu_count", lambda: 64)
    assert worker_count(Settings()) == lanes.MAX_DEFAULT_WORKERS
    assert worker_count(Settings(executor="celery")) == 1
    assert worker_count(Settings(main_workers=3, executor="celery")) == 3


def test_one_lane_follows_dependencies_and_stops_at_a_failure(units, monkeypatch):
    ran: list[str] = []

    def fake(instance, defs, unit, options, on_step=None, tags=None):
        ran.append(unit.name)
        return TickerRun(unit.ticker or unit.name, 0, "", unit.name != "moderator_sft", 0.0, [])

    monkeypatch.setattr(lanes, "execute_unit", fake)
    done: list[str] = []
    left = run_units(
        None, defs, list(units.values()), LaneOptions(1), lambda u: None, lambda u, r: done.append(u.name)
    )
    assert ran == done and ran[-1] == "moderator_sft"
    assert ran.index("moderator_base") < ran.index("moderator_sft")
    assert {u.name for u in left} >= {"moderator_grpo", "rolling_evaluation", "GOOGL@2", "evaluation_report"}
    assert not set(ran) & {u.name for u in left}


def _votes(settings: Settings) -> pd.DataFrame:
    frame = Warehouse(settings.warehouse_path).query("SELECT * FROM council.votes")
    return frame.drop(columns=[c for c in frame.columns if c in ("created_at", "run_id")]).sort_values(
        ["ticker", "date", "role"], ignore_index=True
    )


@pytest.mark.slow
def test_two_lanes_build_what_one_builds_and_report_a_failure(tmp_path, seed_dir, monkeypatch):
    """One lane builds INTC; two lanes build INTC beside an AAPL whose prices fail their
    blocking check: the command fails naming the partition, and INTC's votes are the same."""
    import shutil

    from stocker_assets import pipeline_cli
    from stocker_core.cli import build_app

    bad = tmp_path / "bad"
    shutil.copytree(seed_dir, bad)
    bars = pd.read_csv(bad / "prices.csv")
    bars.loc[(bars["ticker"] == "AAPL") & (bars["date"] == "2023-08-10"), "high"] = 1.0
    bars.to_csv(bad / "prices.csv", index=False)
    app = build_app([pipeline_cli.commands])
    months = ["--from", "2023-07", "--to", "2023-09", "--skip", "charts"]
    months += ["--groups", "market,env,text,council"]
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(bad))
    built = {}
    for workers, tickers in ((1, ["INTC"]), (2, ["AAPL", "INTC"])):
        monkeypatch.setenv("STOCKER_HOME", str(tmp_path / f"home{workers}"))
        monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / f"dagster{workers}"))
        monkeypatch.setenv("STOCKER_MAIN_WORKERS", str(workers))
        result = CliRunner().invoke(app, ["materialize", *[a for t in tickers for a in ("-t", t)], *months])
        assert ("on 2 lanes" in result.output) == (workers == 2)
        assert "stage 1: INTC 2023-07…2023-09 (3 months): specialist_votes done" in result.output
        built[workers] = _votes(Settings()).query("ticker == 'INTC'").reset_index(drop=True)
        if workers == 1:
            assert result.exit_code == 0, result.output
        else:
            assert result.exit_code == 1, result.output
            assert "AAPL|2023-08-01" in result.output and "high below low on 2023-08-10" in result.output
    assert len(built[1]) > 0
    pd.testing.assert_frame_equal(built[1], built[2])


def test_a_unit_found_up_to_date_leaves_no_lane_idle(monkeypatch, tmp_path):
    """The first ready unit is skipped as up to date: both lanes still start at once (before,
    the skipped unit took a lane's turn and the second lane waited for the first to finish)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from stocker_assets.engine.up_to_date import Decision

    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    started: list[str] = []
    both_running = threading.Barrier(2, timeout=10)

    class ThreadLanes(ThreadPoolExecutor):  # the lanes' schedule, without processes
        def __init__(self, workers, mp_context=None, initializer=None, initargs=()):
            super().__init__(workers)

    def unit_in_worker(unit, options, token, parent=None):
        started.append(unit.name)
        both_running.wait()  # raises BrokenBarrierError if the other lane never starts
        return TickerRun(unit.ticker, len(unit.months), "", True, 0.0, [])

    class SkipFirst:
        def decide(self, unit):
            return Decision(unit.name != "A@1", "up to date" if unit.name == "A@1" else "new", unit.months)

        def record(self, unit, decision, run):
            pass

    monkeypatch.setattr(lanes, "ProcessPoolExecutor", ThreadLanes)
    monkeypatch.setattr(lanes, "unit_in_worker", unit_in_worker)
    monkeypatch.setattr(lanes, "watch_tagged_runs", lambda instance, token, on_step, stop: stop.wait())
    units = [RunUnit(f"{t}@1", t, ("prices",), 1, ticker=t, months=tuple(MONTHS)) for t in "ABC"]
    done: list[tuple[str, bool]] = []
    left = run_units(
        None,
        defs,
        units,
        LaneOptions(2, up_to_date=SkipFirst()),
        lambda u: None,
        lambda u, r: done.append((u.name, r.success)),
    )
    # A and B are one batch (A up to date, B runs), C the other lane's: both lanes start at once
    assert left == [] and started == ["A…B@1", "C@1"]
    assert sorted(done) == [("A…B@1", True), ("C@1", True)]
