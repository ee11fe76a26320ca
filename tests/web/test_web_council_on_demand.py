"""Issue 41, a first screen that works: the page plays the council on every reference task with
no stored votes, computing them as ``stocker episode run --policy council`` does (same votes, same
trajectory) and writing nothing; an LLM backend's missing votes get a clear 409. Issue 43: the page
closes its play sessions (a route to close one; a page that plays again frees its previous one)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from web_testing import KEY

from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import load_episode
from stocker_core.env.policies import make_policy, run_episode
from stocker_core.env.rewards import RewardParams
from stocker_core.env.tasks import TASKS
from stocker_core.evaluation import council_votes
from stocker_core.evaluation.council_votes import load_vote_book
from stocker_core.text_events.events import load_text_folder
from stocker_core.text_events.store import replace_events, warehouse_text
from stocker_core.warehouse.db import Warehouse
from stocker_core.web import play
from stocker_core.web.app import create_web_app
from stocker_core.web.play import PlaySessions
from stocker_core.web.reader import WarehouseReader
from stocker_core.web.votes import stored_text


def _tree_digest(home: Path) -> dict[str, str]:
    """Every file of the warehouse (the DuckDB file and its Parquet partitions) by content."""
    files = [home / "stocker.duckdb", *sorted((home / "stocker.parts").rglob("*"))]
    return {
        str(f.relative_to(home)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files if f.is_file()
    }


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory) -> dict[str, tuple[dict, Warehouse]]:
    """Per reference task: the trajectory of the CLI's ``--policy council`` (``make_policy``, as
    ``stocker episode run`` builds it) in a home of its own, and that home's warehouse, where the
    CLI stored the votes it computed."""
    from stocker_core.config import Settings

    runs = {}
    for task in TASKS:
        settings = Settings(home=tmp_path_factory.mktemp("cli") / "home")
        env = TradingEnv(load_episode(task, settings), RewardParams.from_settings(settings))
        trajectory = run_episode(env, make_policy("council", env, None, settings))
        runs[task] = (trajectory, Warehouse(settings.warehouse_path))
    return runs


@pytest.mark.parametrize("task", list(TASKS))
def test_the_page_plays_the_council_on_each_reference_task_as_the_cli_does(client, tiny, cli_runs, task):
    before = _tree_digest(tiny.settings.home)
    started = client.post("/web/api/play", json={"episode": task, "policy": "council"})
    assert started.status_code == 200, started.text
    sid = started.json()["state"]["session_id"]
    run = client.post(f"/web/api/play/{sid}/run").json()
    cli, _ = cli_runs[task]
    assert run["state"]["done"] is True and len(run["records"]) == len(cli["actions"])
    assert [(r["side"], r["quantity"]) for r in run["records"]] == [
        (a["side"], a["quantity"]) for a in cli["actions"]
    ]
    assert run["state"]["value"] == pytest.approx(cli["final_value"])
    assert run["state"]["total_reward"] == pytest.approx(cli["total_reward"])
    # a restart plays the same votes again (kept in memory, not recomputed)
    client.post(f"/web/api/play/{sid}/reset")
    again = client.post(f"/web/api/play/{sid}/run").json()
    assert again["state"]["value"] == pytest.approx(cli["final_value"])
    assert _tree_digest(tiny.settings.home) == before  # the page wrote nothing


def test_the_votes_computed_on_demand_are_the_votes_the_cli_stores(tiny, cli_runs):
    sessions = PlaySessions(tiny.settings, WarehouseReader(tiny.settings.warehouse_path))
    for task in TASKS:
        episode = sessions.episode(task)
        computed = sessions.council_book(episode)
        _, warehouse = cli_runs[task]
        stored = load_vote_book(warehouse, tiny.settings, episode.ticker, list(episode.dates))
        assert stored.covers(episode.dates) and computed.covers(episode.dates)
        assert computed.version == stored.version
        for day in episode.dates:
            assert [v.model_dump() for v in computed.on(day)] == [v.model_dump() for v in stored.on(day)]


def test_stored_votes_are_read_and_only_the_missing_days_computed(tiny, monkeypatch):
    """SYN|2015-03-01 has every vote stored (the page plays them as they are: day 1 buys, then
    holds); the next month has none and is computed, once for any number of plays."""
    calls = []
    computing = council_votes.vote_missing_days

    def counted(book, episode, settings, text):
        calls.append(episode.key)
        return computing(book, episode, settings, text)

    monkeypatch.setattr(council_votes, "vote_missing_days", counted)
    client = TestClient(create_web_app(tiny.settings, api_key=""))
    for episode in [KEY, "SYN|2015-06-01", "SYN|2015-06-01"]:
        sid = client.post("/web/api/play", json={"episode": episode, "policy": "council"}).json()["state"][
            "session_id"
        ]
        records = client.post(f"/web/api/play/{sid}/run").json()["records"]
        if episode == KEY:
            assert records[0]["side"] == "buy" and all(r["side"] == "hold" for r in records[1:])
    assert calls == ["SYN|2015-06-01"]


def test_an_llm_backend_without_stored_votes_gets_a_clear_409(tiny):
    settings = tiny.settings.model_copy(update={"council_backend": "openai"})
    client = TestClient(create_web_app(settings, api_key=""))
    answer = client.post("/web/api/play", json={"episode": "task_easy", "policy": "council"})
    assert answer.status_code == 409
    message = answer.json()["error"]
    assert "no stored votes for 43 of 43 days of AAPL|2023-08-01 (openai:" in message
    assert "computes only the rule backend's" in message
    assert "stocker episode run --episode 'AAPL|2023-08-01' --policy council" in message


def test_stored_text_reads_what_warehouse_text_reads(tmp_path):
    warehouse = Warehouse(tmp_path / "stocker.duckdb")
    reader = WarehouseReader(warehouse.path)
    assert stored_text(reader) is None  # no file
    warehouse.ensure_schema()
    assert stored_text(reader) is None  # no text tables
    from stocker_core.config import REFERENCE_TASKS_DIR

    events = load_text_folder(REFERENCE_TASKS_DIR)
    for kind in ("news", "forums", "macro"):
        replace_events(warehouse, kind, getattr(events, kind))
    expected, found = warehouse_text(warehouse), stored_text(reader)
    assert expected is not None and found is not None
    for kind in ("news", "forums", "macro"):
        pd.testing.assert_frame_equal(getattr(found, kind), getattr(expected, kind))


def test_a_page_that_plays_again_frees_its_previous_session(tiny, monkeypatch):
    """Issue 43: 'load' again and again never locks the page out; a closed session is gone."""
    monkeypatch.setattr(play, "MAX_PER_CLIENT", 2)
    client = TestClient(create_web_app(tiny.settings, api_key=""), client=("10.0.0.7", 1))
    previous = None
    for _ in range(2 * play.MAX_PER_CLIENT + 1):
        answer = client.post("/web/api/play", json={"episode": KEY, "replaces": previous})
        assert answer.status_code == 200, answer.text
        previous = answer.json()["state"]["session_id"]
    assert client.get(f"/web/api/play/{previous}").status_code == 200
    failed = client.post("/web/api/play", json={"episode": "ZZZ|2015-03-01", "replaces": previous})
    assert failed.status_code == 404 and client.get(f"/web/api/play/{previous}").status_code == 200
    other = TestClient(client.app, client=("10.0.0.8", 1))
    kept = other.post("/web/api/play", json={"episode": KEY}).json()["state"]["session_id"]
    # another client's session is never replaced nor closed by this one
    mine = client.post("/web/api/play", json={"episode": KEY, "replaces": kept})
    assert mine.status_code == 200 and other.get(f"/web/api/play/{kept}").status_code == 200
    refused = client.delete(f"/web/api/play/{kept}")
    assert refused.status_code == 409 and "belongs to another client" in refused.json()["error"]
    assert other.delete(f"/web/api/play/{kept}").json() == {"closed": kept}
    gone = other.get(f"/web/api/play/{kept}")
    assert gone.status_code == 404 and "no play session" in gone.json()["error"]
    assert other.delete(f"/web/api/play/{kept}").status_code == 404
    assert other.delete("/web/api/play/nope").status_code == 400
    bad = client.post("/web/api/play", json={"episode": KEY, "replaces": "x"})
    assert bad.status_code == 422
