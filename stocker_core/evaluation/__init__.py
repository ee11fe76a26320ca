"""Evaluation: metrics, rule baselines, the backtest runner over the policy registry,
chronological splits, rolling windows, statistics, the ``eval.*`` tables and the report.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "METRIC_NAMES": "metrics",
    "curve_metrics": "metrics",
    "max_drawdown": "metrics",
    "MacdPolicy": "baselines",
    "ZmrPolicy": "baselines",
    "macd_long": "baselines",
    "zscores": "baselines",
    "zmr_long": "baselines",
    "OraclePolicy": "oracle",
    "oracle_long": "oracle",
    "day_sentiment": "oracle",
    "Backtest": "runner",
    "PolicyRun": "runner",
    "backtest": "runner",
    "ordered_policies": "runner",
    "policy_label": "runner",
    "VoteBook": "council_votes",
    "load_vote_book": "council_votes",
    "SplitConfig": "splits",
    "Splits": "splits",
    "SplitRange": "splits",
    "SplitLeakError": "splits",
    "compute_splits": "splits",
    "load_splits": "splits",
    "training_days": "splits",
    "RollingConfig": "rolling",
    "bootstrap_ci": "stats",
    "sign_test": "stats",
    "timing_test": "stats",
    "backtest_partitions": "pipeline",
    "compute_and_store_splits": "pipeline",
    "rolling_evaluation": "pipeline",
    "build_report": "report",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
