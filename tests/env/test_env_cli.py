"""``stocker episode info|run`` and ``stocker grade`` through the real Typer app."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from stocker_core.cli import app

runner = CliRunner()


def test_episode_info_json(seed_settings):
    r = runner.invoke(app, ["episode", "info", "--task", "task_easy", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    for key in (
        "ticker",
        "start",
        "end",
        "trading_days",
        "starting_cash",
        "buy_and_hold_final",
        "ideal_total",
        "greedy_total",
    ):
        assert key in info
    assert info["ticker"] == "AAPL" and info["trading_days"] == 43
    assert info["ideal_total"] >= info["greedy_total"]
    r = runner.invoke(app, ["episode", "info", "--episode", "META|2022-09-01", "--json"])
    assert json.loads(r.stdout)["trading_days"] == 42


def test_episode_info_unknown_task_is_a_clear_error(seed_settings):
    r = runner.invoke(app, ["episode", "info", "--task", "task_nope"])
    assert r.exit_code == 2 and "unknown task" in r.output


def test_run_then_grade_and_sweep(seed_settings, tmp_path):
    out = tmp_path / "traj.json"
    r = runner.invoke(
        app,
        [
            "episode",
            "run",
            "--task",
            "task_medium",
            "--policy",
            "random",
            "--seed",
            "4",
            "--json",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    traj = json.loads(r.stdout)
    for key in ("rewards", "breakdowns", "total_reward", "final_value", "actions", "prices"):
        assert key in traj
    assert len(traj["rewards"]) == 41
    r = runner.invoke(app, ["grade", str(out), "--json"])
    assert r.exit_code == 0, r.output
    graded = json.loads(r.stdout)
    assert graded["max_abs_diff_vs_recorded"] <= 1e-9
    grid = tmp_path / "grid.yaml"
    grid.write_text("w_perf: [0.5, 0.7]\ntransaction_cost: [0.0, 0.001, 0.002]\n")
    r = runner.invoke(app, ["grade", str(out), "--sweep", str(grid), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["combinations"] == 6
    grid.write_text("bogus: [1]\n")
    r = runner.invoke(app, ["grade", str(out), "--sweep", str(grid)])
    assert r.exit_code == 2 and "sweepable" in r.output


def test_run_buy_and_hold_matches_info(seed_settings):
    info = json.loads(runner.invoke(app, ["episode", "info", "--task", "task_hard", "--json"]).stdout)
    r = runner.invoke(app, ["episode", "run", "--task", "task_hard", "--policy", "buy_and_hold", "--json"])
    assert json.loads(r.stdout)["final_value"] == info["buy_and_hold_final"]
