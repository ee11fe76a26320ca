"""The report's "Forward record" section: each policy's ledger record (view ``ledger.record``,
written by ``stocker ledger score`` / the ``ledger_scores`` asset), live and replayed apart.

Read from the warehouse only: the ledger sits above the evaluation, so the report reads what it
stored and never imports it."""

from __future__ import annotations

import duckdb
import pandas as pd

from stocker_core.warehouse.db import Warehouse

FORWARD_MODES = ("live", "replayed")


def read_forward_record(warehouse: Warehouse) -> pd.DataFrame:
    """The stored forward record (empty when nothing has been scored, or no warehouse)."""
    if not warehouse.path.exists():
        return pd.DataFrame()
    try:
        return warehouse.query("SELECT * FROM ledger.record ORDER BY mode, policy")
    except duckdb.Error:  # no ledger yet: the view is made by the first scoring
        return pd.DataFrame()


def _pct(value: object, digits: int = 2) -> str:
    if value is None or pd.isna(value):
        return "–"
    return f"{float(value) * 100:+.{digits}f}%"


def forward_table(record: pd.DataFrame, mode: str) -> pd.DataFrame:
    """One row per policy of ``mode``: days, sessions, cumulative return, excess over
    buy-and-hold, mean daily excess with its 95% t-interval, p and the minimum detectable edge."""
    if record.empty:
        return pd.DataFrame()
    rows = record.loc[record["mode"] == mode]
    return pd.DataFrame(
        {
            "policy": rows["policy"],
            "days": rows["days"].astype(int),
            "tickers": rows["tickers"].astype(int),
            "sessions": rows["first_session"].astype(str) + " … " + rows["last_session"].astype(str),
            "cumulative return": rows["cumulative_return"].map(_pct),
            "excess over buy-and-hold": rows["excess_cumulative"].map(_pct),
            "mean daily excess [95% CI]": [
                f"{_pct(m, 3)} [{_pct(lo, 3)}, {_pct(hi, 3)}]" if pd.notna(lo) else f"{_pct(m, 3)} [–]"
                for m, lo, hi in zip(rows["mean_daily_excess"], rows["ci_low"], rows["ci_high"], strict=True)
            ],
            "p": rows["p_value"].map(lambda p: "–" if pd.isna(p) else f"{float(p):.3f}"),
            "min. detectable edge / day": rows["min_detectable_edge"].map(lambda v: _pct(v, 3)),
        }
    ).reset_index(drop=True)
