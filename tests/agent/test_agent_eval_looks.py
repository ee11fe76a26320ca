"""`stocker agent eval --split test` is a counted look at the test split."""

import json

import pandas as pd

from stocker_core.agent.commands import _record_test_look
from stocker_core.config import get_settings
from stocker_core.evaluation.store import ensure_eval_tables, read_eval
from stocker_core.warehouse.db import Warehouse


def test_the_theta_table_on_test_is_recorded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    settings = get_settings(fresh=True)
    try:
        _record_test_look(["agent_scripted"], (0.01,), pd.DataFrame({"ticker": ["GOOGL"]}))
        assert not settings.warehouse_path.exists()  # no warehouse: nothing to record into
        warehouse = Warehouse(settings.warehouse_path)
        ensure_eval_tables(warehouse)
        table = pd.DataFrame({"ticker": ["GOOGL", "JPM", "GOOGL"]})
        _record_test_look(["agent_scripted"], (0.01, 0.02), table)
        _record_test_look(["agent_scripted"], (0.01, 0.02), table)  # the same table again: one look
        looks = read_eval(warehouse, "eval.test_looks")
        assert len(looks) == 2 and set(looks["what"]) == {"agent eval"} and set(looks["who"]) == {"cli"}
        assert json.loads(looks.iloc[0]["tickers"]) == ["GOOGL", "JPM"]
        assert json.loads(looks.iloc[0]["model_versions"]) == {"agent_scripted": "rules"}
        assert "now had 1" in capsys.readouterr().err
        _record_test_look(["agent_scripted"], (0.05,), table)  # another θ grid: another look
        assert "now had 2" in capsys.readouterr().err
    finally:
        get_settings(fresh=True)
