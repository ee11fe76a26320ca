"""The Training view's data (issue 52): each run leads with its learning curve (valid reward or
return by step, the kept step named), series that never move are one line of text instead of
flat charts, and every timestamp is written one way. Before the fix an agent run opened with
three flat charts (held-out answered 1.0, format 1.0, n 60), the valid curve of a moderator was
not shown at all, and ``created_at`` read ``2024-01-02`` beside ``2024-01-03T09:30:05``."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient
from web_testing import AGENT_RUN, KEY, add_agent_run, copy_tiny_home

from stocker_core.web.app import create_web_app
from stocker_core.web.training_curves import is_constant, learning_curve, split_constant

STAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_template) -> dict[str, dict]:
    tiny = copy_tiny_home(tiny_template, tmp_path_factory.mktemp("training") / "home")
    add_agent_run(tiny)
    training = tiny.settings.home / "models" / "moderator_sft" / "training.json"
    report = json.loads(training.read_text())
    report["extra"] = {"valid_curve": [[0, 0.5], [10, 0.9], [20, 0.7]], "kept_step": 10}
    training.write_text(json.dumps(report))
    client = TestClient(create_web_app(tiny.settings, api_key=""))
    return {r["run_id"]: r for r in client.get("/web/api/training").json()["runs"]}


def test_an_agent_run_leads_with_its_valid_result_and_the_kept_step(runs) -> None:
    agent = runs[AGENT_RUN]
    assert agent["learning"] == {
        "name": "valid result (mean reward per decision)",
        "x": "step",
        "points": [[0, -0.02], [1, 0.01], [2, 0.04], [3, 0.03]],
        "kept_step": 2,
    }
    flat = {c["name"]: c["value"] for c in agent["constant"]}
    assert flat["held-out answered"] == 1.0 and flat["held-out format"] == 1.0 and flat["held-out n"] == 60
    assert set(agent["curves"]) == {"held-out total", "warm-start loss", "RL reward", "RL loss"}
    assert all(not is_constant(points) for points in agent["curves"].values())


def test_a_moderator_leads_with_its_valid_reward(runs) -> None:
    sft = runs["run1:moderator_sft"]
    assert sft["learning"]["name"] == "valid reward" and sft["learning"]["kept_step"] == 10
    assert sft["curves"] == {"training loss": [[0, 1.5], [10, 0.75], [20, 0.5]]}


def test_every_timestamp_is_written_one_way(runs) -> None:
    stamps = [r["created_at"] for r in runs.values()]
    stamps += [row["materialized_at"] for r in runs.values() for row in r["lineage"]]
    assert len(stamps) >= 4 and all(STAMP.fullmatch(s) for s in stamps), stamps
    assert runs[AGENT_RUN]["created_at"] == "2024-01-03 09:30:05"
    assert runs["run1:moderator_sft"]["created_at"] == "2024-01-02 00:00:00"


def test_a_kept_step_off_the_curve_is_not_marked_and_junk_is_skipped() -> None:
    data = {"extra": {"valid_curve": [[0, 1.0], [5, float("nan")], ["x", 2], [10, 2.0]], "kept_step": 7}}
    assert learning_curve("moderator_sft", "sft", data) == {
        "name": "valid reward",
        "x": "step",
        "points": [[0, 1.0], [10, 2.0]],
        "kept_step": None,
    }
    assert learning_curve("moderator_base", "base", {}) is None
    curves = {"a": [[0, 1.0]], "b": [[0, 1.0], [1, 1.0]], "c": [[0, 1.0], [1, 2.0]], "d": []}
    moving, flat = split_constant(curves)
    assert list(moving) == ["c"] and [f["name"] for f in flat] == ["a", "b"]


def test_the_episode_key_is_still_listed(runs) -> None:
    assert runs["run1:moderator_sft"]["episodes"]["keys"] == [KEY]
