"""Evaluation: metrics, the backtest runner over the policy registry, chronological splits,
rolling windows, statistics, the ``eval.*`` tables and the report. The baselines it plays
(rules, forecast, oracle, deep RL) are ``stocker_core.baselines``.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "METRIC_NAMES": "metrics",
    "curve_metrics": "metrics",
    "max_drawdown": "metrics",
    "Backtest": "backtests",
    "PolicyRun": "backtests",
    "backtest": "backtests",
    "ordered_policies": "backtests",
    "policy_label": "backtests",
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
    "backtest_partitions": "steps",
    "compute_and_store_splits": "steps",
    "rolling_evaluation": "steps",
    "build_report": "report",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
