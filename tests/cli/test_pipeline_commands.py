"""The pipeline's commands as a new user meets them: hints that work, help that says what
it means, runs through named jobs with progress, empty months marked, read-only SQL."""

from __future__ import annotations

import json
import os
from datetime import date

import dagster as dg
import pytest
import typer
from typer.testing import CliRunner

from stocker_assets import pipeline_cli
from stocker_assets.definitions.jobs import split_by_job
from stocker_assets.definitions.location import defs
from stocker_assets.definitions.progress import Progress, parse_progress, progress_message
from stocker_assets.engine.materialize_progress import MaterializeProgress
from stocker_assets.engine.runner import NO_DATA_TAG, StepEvent
from stocker_core.cli import build_app
from stocker_core.config import get_settings
from stocker_core.env import commands as env_cli
from stocker_core.market import chart_cli
from stocker_core.warehouse import sql_cli

runner = CliRunner()


def _app() -> typer.Typer:
    return build_app([pipeline_cli.commands, sql_cli.commands, chart_cli.commands, env_cli.commands])


@pytest.fixture
def sample_env(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    return get_settings(fresh=True)


def test_tickers_add_hint_is_a_command_that_parses(sample_env):
    added = runner.invoke(_app(), ["tickers", "add", "MSFT", "AAPL"])
    assert added.exit_code == 0, added.output
    hint = added.output.split("backfill them with: ", 1)[1].split()
    assert hint == ["stocker", "materialize", "-t", "MSFT", "-t", "AAPL"]
    # the hint's arguments parse: only the deliberately bad group is refused
    parsed = runner.invoke(_app(), [*hint[1:], "--groups", "nope"])
    assert parsed.exit_code == 2 and "unknown group(s) nope" in parsed.output


def test_help_texts_say_what_they_mean(sample_env):
    materialize = runner.invoke(_app(), ["materialize", "--help"], terminal_width=200).output
    assert "``" not in materialize
    for group in ("market", "env", "text", "council", "evaluation", "training"):
        assert group in materialize
    assert "market_job" in materialize
    assert "Address to listen on" in runner.invoke(_app(), ["ui", "--help"], terminal_width=200).output
    usage = runner.invoke(_app(), ["chart", "--help"], terminal_width=200).output
    assert "TICKER" in usage and "DATE" in usage and "{ticker}" not in usage


def test_chart_into_a_folder_and_a_date_after_the_data(sample_env, tmp_path):
    out = tmp_path / "charts"
    out.mkdir()
    made = runner.invoke(_app(), ["chart", "GOOGL", "2016-03-15", "-o", str(out)])
    assert made.exit_code == 0, made.output
    png = out / "GOOGL_2016-03-15.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    late = runner.invoke(_app(), ["chart", "AAPL", "2024-03-15"])
    assert late.exit_code == 2
    assert "AAPL has bars up to 2023-09-29; pick a date on or before it" in late.output


def test_empty_episode_is_an_error_not_task_easy(sample_env):
    for flag in ("--episode", "--task"):
        result = runner.invoke(_app(), ["episode", "info", flag, ""])
        assert result.exit_code == 2 and "is empty" in result.output


def test_episode_run_says_what_its_numbers_are(sample_env):
    result = runner.invoke(_app(), ["episode", "run", "--episode", "GOOGL|2012-03-01"], terminal_width=200)
    assert result.exit_code == 0, result.output
    lines = {
        line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in result.output.splitlines()
    }
    assert lines["total_reward"].endswith("reward points (sum of 42 step rewards, each in [-1, 1])")
    assert "of start cash (hindsight-ideal profit: +" in lines["ideal_total"]
    assert "on 10000.00 start cash" in lines["final_value"]


def test_progress_lines_round_trip():
    assert parse_progress(progress_message(40, 112, "charts")) == Progress(40, 112, "charts")
    assert parse_progress("GOOGL: 3 month(s)") is None


def test_non_interactive_progress_prints_steps_and_tenths():
    from rich.console import Console

    console = Console(record=True, force_terminal=False, width=200)
    with MaterializeProgress(console, ["prices_are_valid"]) as progress:
        task, on_event = progress.track("GOOGL", 2)
        on_event(StepEvent("market_job", "charts", "started"))
        for done in (0, 5, 9, 10, 57, 100):
            on_event(StepEvent("market_job", "charts", "progress", Progress(done, 100, "charts")))
        on_event(StepEvent("market_job", "charts", "done", partitions=3))
        on_event(StepEvent("market_job", "prices_prices_are_valid", "done"))
        progress.finish(task, "GOOGL", True, 1.0)
    text = console.export_text()
    assert "GOOGL: charts started (market_job)" in text
    # a line per new tenth while unfinished (0, 10, 57 of 100); the last one is the "done" line
    progress_lines = [line.split("GOOGL: ")[1] for line in text.splitlines() if "/100" in line]
    assert [line.split(", ETA")[0] for line in progress_lines] == [
        "charts 0/100 charts",
        "charts 10/100 charts",
        "charts 57/100 charts",
    ]
    assert "ETA" not in progress_lines[0] and all(", ETA " in line for line in progress_lines[1:])
    assert "GOOGL: charts done, 3 partition(s)" in text
    assert "GOOGL: check prices_are_valid done" in text


def test_runs_split_into_named_jobs_in_dependency_order():
    by_name = {k.to_user_string(): a for a in defs.assets for k in a.keys}
    runs = split_by_job(
        [by_name[n] for n in ("rolling_evaluation", "splits", "moderator_base", "drl_agents")]
    )
    assert [(job, sorted(k.to_user_string() for a in part for k in a.keys)) for job, part in runs] == [
        ("evaluation_job", ["drl_agents", "splits"]),
        ("training_job", ["moderator_base"]),
        ("evaluation_job", ["rolling_evaluation"]),
    ]
    for name in ("market_job", "env_job", "council_job", "evaluation_job", "training_job"):
        assert defs.resolve_job_def(name).name == name


def _months_after(first: date, last: date) -> int:
    return (last.year - first.year) * 12 + last.month - first.month + 1


@pytest.mark.slow
def test_materialize_runs_named_jobs_with_step_lines_and_marks_empty_months(sample_env, monkeypatch):
    monkeypatch.setenv("STOCKER_CHARTS", "eager")  # the charts step's in-step progress is checked
    result = runner.invoke(
        _app(), ["materialize", "-t", "GOOGL", "--from", "2018-07", "--to", "2018-08", "--groups", "market"]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "prices started (market_job)" in out and "check prices_are_valid done" in out
    assert "charts done, 2 partition(s)" in out
    assert "/42 charts" in out  # in-step progress: July (21) and August 1-29 (21) charts
    assert 'stocker sql "SELECT' in out and "duckdb " not in out
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
        assert {r.job_name for r in runs} == {"market_job"}
        # GOOGL's sample bars end on 2018-08-29: every month from 2018-09 to this month is empty
        empty = _months_after(date(2018, 9, 1), date.today())
        assert f"{3 * empty} partition(s) outside the tickers' data marked 'no data'" in out
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("charts"), asset_partitions=["GOOGL|2019-01-01"]),
            limit=1,
        ).records
        event = records[0].asset_materialization
        assert event.tags[NO_DATA_TAG] == "true"
        assert event.metadata["status"].value.startswith("no data: the sample source has GOOGL bars")
    again = runner.invoke(_app(), ["materialize", "-t", "GOOGL", "--from", "2018-08", "--groups", "market"])
    assert again.exit_code == 0 and "marked 'no data'" not in again.output  # once only


def test_sql_reads_and_refuses_writes(sample_env):
    from stocker_core.warehouse import Warehouse

    with Warehouse(sample_env.warehouse_path).transaction() as con:
        con.execute("CREATE SCHEMA IF NOT EXISTS demo")
        con.execute("CREATE TABLE demo.t AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(n, s)")
    shown = runner.invoke(_app(), ["sql", "SELECT n, s FROM demo.t ORDER BY n"])
    assert shown.exit_code == 0 and shown.output.split() == ["n", "s", "1", "a", "2", "b"]
    rows = runner.invoke(_app(), ["sql", "SELECT sum(n) AS total FROM demo.t", "--json"])
    assert json.loads(rows.output) == [{"total": 3}]
    for write in (
        "INSERT INTO demo.t VALUES (3, 'c')",
        "DROP TABLE demo.t",
        "COPY (SELECT 1) TO 'leak.csv'",
    ):
        refused = runner.invoke(_app(), ["sql", write])
        assert refused.exit_code == 2 and "only reads the warehouse" in refused.output, write
    assert runner.invoke(_app(), ["sql", "SELECT count(*) AS n FROM demo.t", "--json"]).output.strip() == (
        '[{"n":2}]'
    )
    assert runner.invoke(_app(), ["sql", "SELEC 1"]).exit_code == 2


def test_sql_without_a_warehouse_is_a_clear_error(sample_env):
    result = runner.invoke(_app(), ["sql", "SELECT 1"])
    assert result.exit_code == 2 and "run `stocker materialize` first" in result.output
    assert not sample_env.warehouse_path.exists()


def test_terminal_bar_moves_with_every_step_and_inside_long_steps():
    from rich.console import Console

    console = Console(force_terminal=True, width=120, file=open(os.devnull, "w"))  # noqa: SIM115
    with MaterializeProgress(console, ["prices_are_valid"]) as progress:
        task, on_event = progress.track("GOOGL", 4)
        bar = progress.bars.tasks[0]
        on_event(StepEvent("market_job", "prices", "started"))
        assert bar.completed == 0 and "prices" in bar.description
        on_event(StepEvent("market_job", "prices", "done", partitions=2))
        assert bar.completed == 1
        on_event(StepEvent("market_job", "prices_prices_are_valid", "done"))
        assert bar.completed == 2
        on_event(StepEvent("market_job", "charts", "progress", Progress(21, 42, "charts")))
        assert bar.completed == 2.5 and "charts 21/42 charts" in bar.description
        on_event(StepEvent("market_job", "charts", "done", partitions=2))
        assert bar.completed == 3 and bar.fields["steps"] == "3/4 steps"
        progress.finish(task, "GOOGL", True, 1.0)
        assert bar.completed == 4
    console.file.close()


def test_eta_is_linear_in_the_share_done():
    from stocker_assets.engine.materialize_progress import clock, eta_text

    assert eta_text(30.0, 0.25) == "ETA 1m30s"  # 30 s for a quarter: 90 s to go
    assert eta_text(10.0, 0.5) == "ETA 10s"
    assert eta_text(3600.0, 0.5) == "ETA 1h00m"
    assert eta_text(10.0, 0.0) == eta_text(10.0, 1.0) == ""  # nothing done yet, or all done
    assert (clock(59.4), clock(61), clock(7322)) == ("59s", "1m01s", "2h02m")


def test_a_quiet_step_still_gets_a_line(monkeypatch):
    """Line mode: a step that reports nothing for HEARTBEAT_S still shows life."""
    import time

    from rich.console import Console

    from stocker_assets.engine import materialize_progress

    monkeypatch.setattr(materialize_progress, "HEARTBEAT_S", 0.3)
    console = Console(record=True, force_terminal=False, width=200)
    with MaterializeProgress(console) as progress:
        task, on_event = progress.track("stage 5: moderator_grpo", 1)
        on_event(StepEvent("training_job", "moderator_grpo", "started"))
        time.sleep(1.0)
        on_event(StepEvent("training_job", "moderator_grpo", "done"))
        progress.finish(task, "stage 5: moderator_grpo", True, 1.0)
        quiet_after = console.export_text(clear=False)
        time.sleep(0.5)  # nothing runs now: no more lines
    text = console.export_text()
    assert "stage 5: moderator_grpo: moderator_grpo still running (" in quiet_after
    assert text.count("still running") == quiet_after.count("still running")


def test_a_ticker_scoped_run_holds_back_whole_history_training_and_evaluation():
    from stocker_assets.engine.runner import select_assets

    _, unpartitioned, _ = select_assets(defs, pipeline_cli.DEFAULT_GROUPS.split(","))
    kept, held = pipeline_cli.whole_history_held_back(unpartitioned)
    names = lambda assets: sorted(k.to_user_string() for a in assets for k in a.keys)  # noqa: E731
    assert names(kept) == ["forum_posts", "macro_events", "news"]
    assert {"splits", "rolling_evaluation", "evaluation_report", "moderator_grpo", "agent_policy"} <= set(
        names(held)
    )
