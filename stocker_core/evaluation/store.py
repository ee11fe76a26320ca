"""The evaluation tables in the warehouse (schema ``eval``): writes replace, never duplicate.

- ``eval.backtests``: one row per (episode key, policy) with every metric; ``scope`` is
  ``episode`` (a ticker × month partition) or ``test_period`` (the whole test split).
- ``eval.equity_curves``: the daily account of each backtest row (step 0 is V_0).
- ``eval.splits``: train / valid / test date ranges per ticker.
- ``eval.rolling``: every policy on every rolling window of the test split.
- ``eval.rolling_summary`` / ``eval.rolling_comparisons``: mean ± bootstrap CI per policy
  and metric; wins, sign-test and Holm-adjusted p-values against buy-and-hold and random
  over the independent (non-overlapping) windows.
- ``eval.reports``: the report files written (path and sha256).
- ``eval.test_looks``: one row per evaluation that played policies on a test split
  (evaluation/looks.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from stocker_core.evaluation.metrics import METRIC_NAMES
from stocker_core.warehouse.db import Warehouse

if TYPE_CHECKING:
    from stocker_core.evaluation.backtests import PolicyRun

_METRIC_COLUMNS = ", ".join(f"{m} {'BIGINT' if m == 'trades' else 'DOUBLE'}" for m in METRIC_NAMES)

EVAL_TABLES: dict[str, str] = {
    "eval.backtests": f"""
        CREATE TABLE IF NOT EXISTS eval.backtests (
            scope VARCHAR NOT NULL, key VARCHAR NOT NULL, ticker VARCHAR NOT NULL, month DATE,
            policy VARCHAR NOT NULL, label VARCHAR, upper_bound BOOLEAN,
            start_date DATE, end_date DATE, trading_days INTEGER, {_METRIC_COLUMNS},
            invalid_steps INTEGER, timing_share DOUBLE, method VARCHAR, seed BIGINT,
            notes VARCHAR, vote_version VARCHAR, run_id VARCHAR, created_at TIMESTAMP,
            PRIMARY KEY (key, policy))""",
    "eval.equity_curves": """
        CREATE TABLE IF NOT EXISTS eval.equity_curves (
            key VARCHAR NOT NULL, ticker VARCHAR NOT NULL, policy VARCHAR NOT NULL,
            step INTEGER NOT NULL, date DATE, close DOUBLE, value DOUBLE NOT NULL,
            position DOUBLE, traded DOUBLE, drawdown DOUBLE,
            PRIMARY KEY (key, policy, step))""",
    "eval.splits": """
        CREATE TABLE IF NOT EXISTS eval.splits (
            ticker VARCHAR NOT NULL, split VARCHAR NOT NULL, start_date DATE NOT NULL,
            end_date DATE NOT NULL, trading_days INTEGER, gap_before INTEGER,
            train_share DOUBLE, valid_share DOUBLE, test_share DOUBLE, gap_days INTEGER,
            created_at TIMESTAMP, PRIMARY KEY (ticker, split))""",
    "eval.rolling": f"""
        CREATE TABLE IF NOT EXISTS eval.rolling (
            ticker VARCHAR NOT NULL, window_index INTEGER NOT NULL, start_date DATE,
            end_date DATE, trading_days INTEGER, policy VARCHAR NOT NULL, label VARCHAR,
            upper_bound BOOLEAN, {_METRIC_COLUMNS}, invalid_steps INTEGER,
            timing_share DOUBLE, method VARCHAR, seed BIGINT, notes VARCHAR,
            PRIMARY KEY (ticker, window_index, policy))""",
    "eval.rolling_summary": """
        CREATE TABLE IF NOT EXISTS eval.rolling_summary (
            policy VARCHAR NOT NULL, label VARCHAR, upper_bound BOOLEAN, metric VARCHAR NOT NULL,
            mean DOUBLE, ci_low DOUBLE, ci_high DOUBLE, n INTEGER, confidence DOUBLE,
            block INTEGER, PRIMARY KEY (policy, metric))""",
    "eval.rolling_comparisons": """
        CREATE TABLE IF NOT EXISTS eval.rolling_comparisons (
            policy VARCHAR NOT NULL, baseline VARCHAR NOT NULL, metric VARCHAR NOT NULL,
            wins INTEGER, losses INTEGER, ties INTEGER, n INTEGER, p_value DOUBLE,
            p_holm DOUBLE, PRIMARY KEY (policy, baseline, metric))""",
    "eval.test_looks": """
        CREATE TABLE IF NOT EXISTS eval.test_looks (
            look_id VARCHAR NOT NULL, looked_at TIMESTAMP NOT NULL, who VARCHAR NOT NULL,
            what VARCHAR, tickers VARCHAR, policies VARCHAR, model_versions VARCHAR,
            config_hash VARCHAR, run_id VARCHAR, PRIMARY KEY (look_id))""",
    "eval.reports": """
        CREATE TABLE IF NOT EXISTS eval.reports (
            name VARCHAR NOT NULL, html_path VARCHAR, markdown_path VARCHAR, sha256 VARCHAR,
            created_at TIMESTAMP, PRIMARY KEY (name))""",
}


ADDED_COLUMNS = ("ALTER TABLE eval.rolling_comparisons ADD COLUMN IF NOT EXISTS p_holm DOUBLE",)
"""Columns added since a table was first created (a warehouse from before gets them)."""


def ensure_eval_tables(warehouse: Warehouse) -> None:
    """Create the ``eval`` schema and its tables if missing, and add newer columns."""
    with warehouse.connect() as con:
        con.execute("CREATE SCHEMA IF NOT EXISTS eval")
        for ddl in EVAL_TABLES.values():
            con.execute(ddl)
        for ddl in ADDED_COLUMNS:
            con.execute(ddl)


def _clean(frame: pd.DataFrame) -> pd.DataFrame:
    """None for NaN so DuckDB stores NULL."""
    return frame.astype(object).where(pd.notna(frame), None)


def replace_rows(warehouse: Warehouse, table: str, frame: pd.DataFrame, where: str, params: list) -> int:
    """Delete ``table``'s rows matching ``where`` and insert ``frame`` by column name, atomically
    (paths of files of the home, e.g. ``eval.reports``', stored relative to it)."""
    from stocker_core.warehouse.home_paths import store_columns

    if table not in EVAL_TABLES:
        raise ValueError(f"unknown evaluation table {table!r}")
    ensure_eval_tables(warehouse)
    frame = store_columns(table, frame, warehouse.home)
    with warehouse.transaction() as con:
        con.execute(f"DELETE FROM {table} WHERE {where}", params)
        if len(frame):
            con.register("incoming_eval", frame)
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_eval")
            con.unregister("incoming_eval")
    return len(frame)


def backtest_frames(
    runs: Sequence[PolicyRun],
    scope: str,
    month_of: dict[str, object] | None = None,
    vote_version: str | None = None,
    run_id: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``eval.backtests`` rows, ``eval.equity_curves`` rows) of policy runs."""
    now = datetime.now()
    rows = []
    for run in runs:
        row = run.row()
        rows.append(
            {
                "scope": scope,
                "key": run.episode_key,
                "ticker": run.ticker,
                "month": (month_of or {}).get(run.episode_key),
                "policy": run.policy,
                "label": row["label"],
                "upper_bound": row["upper_bound"],
                "start_date": run.dates[0],
                "end_date": run.dates[-1],
                "trading_days": len(run.dates),
                **{m: row[m] for m in METRIC_NAMES},
                "invalid_steps": row["invalid_steps"],
                "timing_share": row["timing_share"],
                "method": run.method,
                "seed": run.seed,
                "notes": row["notes"],
                "vote_version": vote_version if run.policy == "council" else None,
                "run_id": run_id,
                "created_at": now,
            }
        )
    backtests = _clean(pd.DataFrame(rows))
    return backtests, equity_frame(runs)


def equity_frame(runs: Sequence[PolicyRun]) -> pd.DataFrame:
    """``eval.equity_curves`` rows of every run in one frame: step 0 is V_0 (no date, close,
    position or trade), then one row per trading day."""
    if not runs:
        return pd.DataFrame()
    lengths = [len(run.values) for run in runs]
    values = np.concatenate([run.values for run in runs])
    peaks = np.concatenate([np.maximum.accumulate(run.values) for run in runs])
    return pd.DataFrame(
        {
            "key": [run.episode_key for run, n in zip(runs, lengths, strict=True) for _ in range(n)],
            "ticker": [run.ticker for run, n in zip(runs, lengths, strict=True) for _ in range(n)],
            "policy": [run.policy for run, n in zip(runs, lengths, strict=True) for _ in range(n)],
            "step": np.concatenate([np.arange(n, dtype=np.int32) for n in lengths]),
            "date": [day for run in runs for day in (None, *run.dates)],
            "close": [close for run in runs for close in (None, *run.closes.tolist())],
            "value": values,
            "position": np.concatenate([np.concatenate([[0.0], run.positions]) for run in runs]),
            "traded": np.concatenate([np.concatenate([[0.0], run.traded]) for run in runs]),
            "drawdown": (peaks - values) / peaks,
        }
    )


def write_backtests(
    warehouse: Warehouse,
    runs: Sequence[PolicyRun],
    scope: str,
    month_of: dict[str, object] | None = None,
    vote_version: str | None = None,
    run_id: str | None = None,
) -> int:
    """Replace the stored rows and curves of every episode key in ``runs``."""
    if not runs:
        return 0
    return write_backtest_frames(warehouse, *backtest_frames(runs, scope, month_of, vote_version, run_id))


def write_backtest_frames(warehouse: Warehouse, backtests: pd.DataFrame, equity: pd.DataFrame) -> int:
    """Replace the stored rows and curves of every episode key in ``backtests`` (``backtest_frames``)."""
    if backtests.empty:
        return 0
    keys = sorted(set(backtests["key"]))
    ensure_eval_tables(warehouse)
    with warehouse.transaction() as con:
        for table, frame in (("eval.backtests", backtests), ("eval.equity_curves", equity)):
            con.execute(f"DELETE FROM {table} WHERE key IN (SELECT unnest(?::VARCHAR[]))", [keys])
            con.register("incoming_eval", frame)
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_eval")
            con.unregister("incoming_eval")
    return len(backtests)


def read_eval(
    warehouse: Warehouse, table: str, where: str = "TRUE", params: Sequence[object] = ()
) -> pd.DataFrame:
    """Rows of an evaluation table (empty frame when the table does not exist yet)."""
    if table not in EVAL_TABLES:
        raise ValueError(f"unknown evaluation table {table!r}")
    if not warehouse.path.exists():
        return pd.DataFrame()
    schema, name = table.split(".")
    exists = warehouse.query(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [schema, name],
    )["n"].iloc[0]
    if not exists:
        return pd.DataFrame()
    return warehouse.query(f"SELECT * FROM {table} WHERE {where}", list(params))
