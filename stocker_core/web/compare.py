"""Compare policies from the evaluation's stored rows (``eval.*``): metrics and equity curves
of one episode, the rolling-window table with confidence intervals and p-values, the reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.evaluation.backtests import ordered_policies, policy_label
from stocker_core.evaluation.clones import clone_label, clone_lines, identical_to, window_clones
from stocker_core.evaluation.metrics import METRIC_HELP, METRIC_NAMES
from stocker_core.evaluation.report import ROLLING_HEADLINE, rolling_table
from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.web.errors import NotFoundError
from stocker_core.web.reader import WarehouseReader, plain, records

NO_BACKTESTS = "no backtests yet: run `stocker materialize` (the evaluation group) to store them"
NO_ROLLING = "no rolling evaluation yet: run `stocker materialize` (rolling_evaluation) to store it"


def backtest_keys(reader: WarehouseReader) -> list[dict[str, Any]]:
    """Every backtested episode (partition or whole test period) with its dates and policy count."""
    frame = reader.frame(
        """SELECT key, scope, ticker, min(start_date) AS start_date, max(end_date) AS end_date,
                  count(*) AS policies FROM eval.backtests GROUP BY key, scope, ticker
           ORDER BY scope DESC, ticker, start_date""",
        needs=["eval.backtests"],
    )
    return records(frame)


def episode_comparison(reader: WarehouseReader, key: str) -> dict[str, Any]:
    """Metrics of every policy on ``key`` and their daily equity curves (step 0 is V_0)."""
    rows = reader.frame("SELECT * FROM eval.backtests WHERE key = ?", [key], needs=["eval.backtests"])
    if rows.empty:
        raise NotFoundError(f"no backtests of {key!r}: {NO_BACKTESTS}")
    curves = reader.frame(
        "SELECT * FROM eval.equity_curves WHERE key = ? ORDER BY policy, step",
        [key],
        needs=["eval.equity_curves"],
    )
    order = ordered_policies(list(rows["policy"]))
    rows = rows.set_index("policy").loc[order].reset_index()
    clones = episode_clones(curves, order, stored_window_clones(reader))
    metrics = [
        {
            "policy": r["policy"],
            "label": clone_label(r["policy"], clones[r["policy"]])
            if r["policy"] in clones
            else policy_label(r["policy"]),
            "clone_of": clones.get(r["policy"]),
            "upper_bound": bool(r["upper_bound"]),
            **{m: r[m] for m in METRIC_NAMES},
            "invalid_steps": r["invalid_steps"],
            "timing_share": r["timing_share"],
            "method": r["method"],
            "notes": r["notes"],
        }
        for r in rows.to_dict(orient="records")
    ]
    series = {}
    for policy, part in curves.groupby("policy", sort=False) if len(curves) else []:
        series[policy] = {
            "date": part["date"].tolist(),
            "close": part["close"].tolist(),
            "value": part["value"].tolist(),
            "position": part["position"].tolist(),
            "traded": part["traded"].tolist(),
            "drawdown": part["drawdown"].tolist(),
        }
    first = rows.iloc[0]
    return plain(
        {
            "key": key,
            "scope": first["scope"],
            "ticker": first["ticker"],
            "start_date": first["start_date"],
            "end_date": first["end_date"],
            "metric_names": list(METRIC_NAMES),
            "metric_help": METRIC_HELP,
            "metrics": metrics,
            "clones": clone_lines(clones, "on every day of this episode"),
            "curves": {p: series[p] for p in order if p in series},
        }
    )


def stored_window_clones(reader: WarehouseReader) -> dict[str, str]:
    """``{policy: original}`` of the stored rolling windows (``window_clones``: equal on every
    window of the test split); empty without a rolling evaluation."""
    values = reader.frame(
        "SELECT ticker, window_index, policy, final_value, total_reward FROM eval.rolling",
        needs=["eval.rolling"],
    )
    return window_clones(values) if len(values) else {}


def episode_clones(curves: pd.DataFrame, order: list[str], windows: dict[str, str]) -> dict[str, str]:
    """``{policy: original}`` on one episode's equity ``curves``, one label per policy across the
    Compare view's tables: a clone of the rolling windows (``windows``) keeps that original here
    whenever the two are identical on this episode too (on an episode ``a2c`` may also equal
    ``buy_and_hold``, but ``moderator_grpo = a2c`` stays the name it has in the rolling table);
    any other policy identical to an earlier one on this episode is named by ``identical_to``."""
    if curves.empty:
        return {}
    found = identical_to(curves, ["step"], ["value"], order)
    present = set(curves["policy"])
    for policy, original in windows.items():
        if policy not in present or original not in present:
            continue
        pair = curves.loc[curves["policy"].isin([policy, original])]
        if identical_to(pair, ["step"], ["value"], [original, policy]).get(policy) == original:
            found[policy] = original
    return {p: found[p] for p in order if p in found}


def rolling_overview(reader: WarehouseReader, config: RollingConfig | None = None) -> dict[str, Any]:
    """The rolling windows' summary (mean and CI per policy and metric), the paired comparisons
    and the report's headline table (same formatting as the HTML report, clones named
    "a2c = buy_and_hold" there and listed under ``clones``)."""
    config = config or RollingConfig()
    summary = reader.frame("SELECT * FROM eval.rolling_summary", needs=["eval.rolling_summary"])
    comparisons = reader.frame("SELECT * FROM eval.rolling_comparisons", needs=["eval.rolling_comparisons"])
    if summary.empty:
        return {
            "empty": NO_ROLLING,
            "table": [],
            "summary": [],
            "comparisons": [],
            "windows": [],
            "clones": [],
        }
    if comparisons.empty:
        comparisons = pd.DataFrame(columns=["policy", "baseline", "metric", "wins", "n", "p_value"])
    windows = reader.frame(
        """SELECT ticker, count(DISTINCT window_index) AS windows, min(start_date) AS first_start,
                  max(end_date) AS last_end FROM eval.rolling GROUP BY ticker ORDER BY ticker""",
        needs=["eval.rolling"],
    )
    clones = stored_window_clones(reader)
    table = rolling_table(summary, comparisons, config.baselines, clones)
    return {
        "empty": None,
        "headline_metrics": list(ROLLING_HEADLINE),
        "baselines": list(config.baselines),
        "table": records(table),
        "summary": records(summary),
        "comparisons": records(comparisons),
        "windows": records(windows),
        "clones": clone_lines(clones, "on every window"),
    }


def stored_reports(reader: WarehouseReader, home: Path) -> list[dict[str, Any]]:
    """The HTML reports on disk under ``home/reports/<name>/report.html`` (indexed or not)."""
    indexed = reader.frame("SELECT name, created_at FROM eval.reports", needs=["eval.reports"])
    created = dict(zip(indexed.get("name", []), indexed.get("created_at", []), strict=True))
    folder = home / "reports"
    found = []
    for html in sorted(folder.glob("*/report.html")) if folder.is_dir() else []:
        name = html.parent.name
        found.append(
            plain({"name": name, "url": f"api/reports/{name}/report.html", "created_at": created.get(name)})
        )
    return found


def report_file(home: Path, name: str) -> Path:
    """The ``report.html`` of report ``name``; NotFoundError when it was never written."""
    from stocker_core.evaluation.report import report_dir

    path = report_dir(home, name) / "report.html"
    if not path.is_file():
        raise NotFoundError(f"no report {name!r}: run `stocker report --name {name}` first")
    return path
