"""The report's "Forward record" section: each policy's scored ledger record, live and replayed apart."""

from __future__ import annotations

import numpy as np
from ledger_testing import FIRST_DECISION, after_close, invoke, set_clock
from stocker_testing import make_bars

from stocker_core.evaluation.forward_report import forward_table, read_forward_record
from stocker_core.evaluation.report import build_report
from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.steps import backtest_partitions, compute_and_store_splits, rolling_evaluation
from stocker_core.market.clock import next_session
from stocker_core.warehouse.db import Warehouse


def _ledger_with_three_scored_days(monkeypatch):
    day = FIRST_DECISION
    for _ in range(4):
        set_clock(monkeypatch, after_close(day))
        assert invoke("record", "--policies", "macd").exit_code == 0
        day = next_session(day)
    settings = set_clock(monkeypatch, after_close(day))
    assert invoke("score").exit_code == 0
    return settings


def test_the_report_shows_the_forward_record_apart_by_mode(aapl_home, monkeypatch):
    settings = _ledger_with_three_scored_days(monkeypatch)
    warehouse = Warehouse(settings.warehouse_path)
    record = read_forward_record(warehouse)
    assert set(record["mode"]) == {"replayed"} and set(record["policy"]) == {"buy_and_hold", "macd"}
    assert list(record["days"]) == [4, 4]
    table = forward_table(record, "replayed")
    assert list(table["policy"]) == ["buy_and_hold", "macd"] and forward_table(record, "live").empty
    assert table.loc[0, "excess over buy-and-hold"] == "+0.00%"

    walk = 100.0 * np.exp(np.cumsum(np.random.default_rng(3).normal(0.0005, 0.02, 400)))
    warehouse.replace_partitions("market.prices", "SYN", make_bars(walk, start="2015-01-01"))  # an evaluation
    compute_and_store_splits(warehouse)
    backtest_partitions(settings, warehouse, ["SYN|2015-03-01"], ["buy_and_hold", "macd"])
    rolling_evaluation(settings, warehouse, ["buy_and_hold", "macd"], RollingConfig(20, 5, resamples=100))
    files = build_report(warehouse, settings.home)
    html, markdown = files.html.read_text(), files.markdown.read_text()
    section = html[html.index('<h2 id="forward">') : html.index('<h2 id="summary">')]
    assert "<h3>Live</h3>\n<p>–</p>" in section
    assert "2023-06-02 … 2023-06-07" in section and "macd" in section
    assert "## Forward record" in markdown and "2023-06-02 … 2023-06-07" in markdown
