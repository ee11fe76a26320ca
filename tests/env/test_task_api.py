"""OpenEnv's task API over the reference tasks and the warehouse's episodes: the catalog's
splits (an episode is in train/valid/test only when all its days are), paging, and the HTTP
routes' answers to bad input."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from stocker_core.env.server import create_app
from stocker_core.env.task_api import TaskCatalog, UnknownSplitError
from stocker_core.evaluation.splits import SplitRange, Splits, save_splits
from stocker_core.warehouse.db import Warehouse


def _episode(ticker: str, month: str, start: str, end: str) -> dict:
    return {
        "ticker": ticker,
        "month": date.fromisoformat(month),
        "key": f"{ticker}|{month}",
        "start_date": date.fromisoformat(start),
        "end_date": date.fromisoformat(end),
        "trading_days": 20,
        "starting_cash": 10_000.0,
    }


@pytest.fixture
def stored(seed_settings):
    """Four KO episodes; train ends 2016-02-29, valid is 2016-04-01 … 2016-04-29."""
    warehouse = Warehouse(seed_settings.warehouse_path)
    rows = [
        _episode("KO", "2016-01-01", "2016-01-04", "2016-01-29"),
        _episode("KO", "2016-02-01", "2016-02-01", "2016-02-29"),
        _episode("KO", "2016-03-01", "2016-03-01", "2016-03-31"),  # in the gap: no split
        _episode("KO", "2016-04-01", "2016-04-01", "2016-04-29"),
    ]
    warehouse.upsert_partitioned("env.episodes", "KO", pd.DataFrame(rows))
    ranges = (
        SplitRange("KO", "train", date(2016, 1, 4), date(2016, 2, 29), 40, 0),
        SplitRange("KO", "valid", date(2016, 4, 1), date(2016, 4, 29), 20, 21),
        SplitRange("KO", "test", date(2016, 6, 1), date(2016, 6, 30), 21, 21),
    )
    save_splits(warehouse, Splits(ranges))
    return seed_settings


def test_reference_split_without_a_warehouse(seed_settings):
    catalog = TaskCatalog(seed_settings)
    assert catalog.list_splits() == [{"name": "reference", "type": "test"}]
    tasks = catalog.list_tasks("reference")
    assert [t["id"] for t in tasks] == ["task_easy", "task_medium", "task_hard"]
    assert tasks[2]["reset"] == {"task_id": "task_hard"} and tasks[2]["episode"] == "META|2022-09-01"
    with pytest.raises(UnknownSplitError, match="unknown split 'nope'"):
        catalog.num_tasks("nope")
    with pytest.raises(IndexError):
        catalog.get_task("reference", -1)


def test_stored_episodes_and_chronological_splits(stored):
    catalog = TaskCatalog(stored)
    assert [s["name"] for s in catalog.list_splits()] == ["reference", "episodes", "train", "valid", "test"]
    assert catalog.num_tasks("episodes") == 4
    assert [t["id"] for t in catalog.list_tasks("train")] == ["KO|2016-01-01", "KO|2016-02-01"]
    assert [t["id"] for t in catalog.list_tasks("valid")] == ["KO|2016-04-01"]
    assert catalog.num_tasks("test") == 0
    task = catalog.get_task("episodes", 2)
    assert task["reset"] == {"episode": "KO|2016-03-01"} and task["start_date"] == "2016-03-01"
    assert [t["index"] for t in catalog.get_task_range("episodes", 1, 3)] == [1, 2]


def test_task_routes_answer_bad_input_clearly(stored):
    with TestClient(create_app(stored, api_key="")) as client:
        assert client.get("/list_environments").json() == ["stocker"]
        assert [s["name"] for s in client.get("/stocker/splits").json()][:2] == ["reference", "episodes"]
        listed = client.post("/stocker/tasks", json={"split": "train"}).json()
        assert listed["env_name"] == "stocker" and len(listed["tasks"]) == 2
        assert client.post("/stocker/num_tasks", json={"split": "episodes"}).json() == {"num_tasks": 4}
        assert client.post("/stocker/task", json={"split": "reference", "index": 1}).json()["task"]["id"] == (
            "task_medium"
        )
        ranged = client.post("/stocker/task_range", json={"split": "episodes", "start": -1}).json()
        assert [t["id"] for t in ranged["tasks"]] == ["KO|2016-04-01"]
        assert client.get("/other/splits").status_code == 404
        assert client.post("/stocker/tasks", json={"split": "nope"}).status_code == 404
        assert client.post("/stocker/task", json={"split": "reference", "index": 3}).status_code == 400
        for bad in (
            {},
            {"split": 3},
            {"split": "reference", "index": "1"},
            {"split": "reference", "index": True},
        ):
            answer = client.post("/stocker/task", json=bad)
            assert answer.status_code == 422 and "error" in answer.json(), bad
        assert client.post("/stocker/tasks", content=b"{oops").status_code == 400
        # a task's reset arguments start its episode
        reset = client.post(
            "/reset",
            json=client.post("/stocker/task", json={"split": "reference", "index": 0}).json()["task"][
                "reset"
            ],
        ).json()
        assert reset["observation"]["ticker"] == "AAPL"
