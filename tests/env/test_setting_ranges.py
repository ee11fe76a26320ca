"""Numbers of the reward and the episodes are refused when they are read, not as a crash deep
in an episode (issue 43, item 2): ``STOCKER_TRANSACTION_COST=-1`` gave ``ZeroDivisionError``
tracebacks and ``POST /reset`` a 500. The server refuses to start; a sweep's grid and a saved
trajectory's parameters are held to the same ranges."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from stocker_core.cli import app
from stocker_core.config import Settings, SettingsError, get_settings
from stocker_core.env.grader import GradeError, trajectory_params, validate_grid
from stocker_core.env.rewards import RewardParams, RewardParamsError
from stocker_core.env.server import create_app

runner = CliRunner()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("STOCKER_TRANSACTION_COST", "-1"),
        ("STOCKER_EPISODE_MONTHS", "0"),
        ("STOCKER_STARTING_CASH", "nan"),
        ("STOCKER_W_PERF", "inf"),
        ("STOCKER_ANNUAL_INFLATION", "nan"),
        ("STOCKER_LOOKAHEAD_K", "-3"),
    ],
)
def test_the_server_refuses_to_start_on_a_bad_setting(seed_settings, monkeypatch, name, value) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=f"^{name}="):
        get_settings(fresh=True)  # what a fresh server process reads first
    with pytest.raises(SettingsError, match=f"^{name}="):
        create_app(api_key="")  # so nothing is served to answer a 500
    result = runner.invoke(app, ["serve", "--port", "1"])
    assert result.exit_code == 2 and result.output.startswith(f"error: {name}="), result.output
    assert len(result.output.strip().splitlines()) == 1


def test_settings_built_around_validation_cannot_make_a_server(seed_settings) -> None:
    unchecked = Settings.model_construct(**{**seed_settings.model_dump(), "transaction_cost": -1.0})
    with pytest.raises(RewardParamsError, match=r"transaction_cost=-1.0 \(expected a number at least 0"):
        create_app(unchecked, api_key="")


def test_reset_under_good_settings_still_answers(seed_settings) -> None:
    from fastapi.testclient import TestClient

    with TestClient(create_app(api_key="")) as client:
        answer = client.post("/reset", json={"task_id": "task_easy"})
    assert answer.status_code == 200 and answer.json()["session_id"]


@pytest.mark.parametrize(
    "changes",
    [
        {"transaction_cost": -1.0},
        {"transaction_cost": 1.0},
        {"starting_cash": math.nan},
        {"starting_cash": -5.0},
        {"w_perf": math.inf},
        {"annual_inflation": math.nan},
        {"lookahead_k": -3},
    ],
)
def test_reward_params_refuse_what_the_settings_refuse(changes) -> None:
    with pytest.raises(RewardParamsError, match=next(iter(changes))):
        RewardParams(**changes)
    with pytest.raises(RewardParamsError):
        RewardParams().replace(**changes)
    with pytest.raises(GradeError, match="the trajectory's params"):
        trajectory_params({"params": changes})


@pytest.mark.parametrize(
    ("grid", "words"),
    [
        (
            {"transaction_cost": [0.001, -1]},
            "transaction_cost: -1 (expected a number at least 0 and below 1)",
        ),
        ({"starting_cash": [".nan"]}, "starting_cash"),
        ({"w_perf": [float("inf")]}, "w_perf: inf (expected a finite number at least 0)"),
        ({"lookahead_k": [-3]}, "lookahead_k: -3"),
    ],
)
def test_a_sweep_grid_out_of_range_is_refused(grid, words) -> None:
    with pytest.raises(GradeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        validate_grid(grid)


def test_grade_with_a_bad_grid_is_one_line_and_exit_2(seed_settings, tmp_path) -> None:
    out = tmp_path / "traj.json"
    ran = runner.invoke(app, ["episode", "run", "--task", "task_easy", "--policy", "buy_and_hold", "--json"])
    assert ran.exit_code == 0, ran.output
    out.write_text(ran.stdout)
    grid = tmp_path / "grid.yaml"
    grid.write_text("transaction_cost: [0.001, -1]\n")
    result = runner.invoke(app, ["grade", str(out), "--sweep", str(grid)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert result.output.startswith("error: grid entry transaction_cost: -1"), result.output
    traj = json.loads(out.read_text())
    traj["params"] = {**traj.get("params", {}), "transaction_cost": -1}
    out.write_text(json.dumps(traj))
    result = runner.invoke(app, ["grade", str(out)])
    assert result.exit_code == 2 and "transaction_cost=-1" in result.output, result.output


def test_month_settings_are_read_as_months(monkeypatch) -> None:
    monkeypatch.setenv("STOCKER_MAIN_FROM", "2015-03-17")
    monkeypatch.setenv("STOCKER_MAIN_TO", " 2016-01 ")
    settings = get_settings(fresh=True)
    assert (settings.main_from, settings.main_to) == ("2015-03", "2016-01")
    monkeypatch.setenv("STOCKER_MAIN_FROM", "")  # blank: all data, as unset
    assert get_settings(fresh=True).main_from is None
    monkeypatch.undo()
    get_settings(fresh=True)
