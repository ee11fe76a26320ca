"""Evaluation: metrics, the backtest runner over the policy registry, chronological splits,
rolling windows, statistics, the ``eval.*`` tables and the report. The baselines it plays
(rules, forecast, oracle, deep RL) are ``stocker_core.baselines``.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

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


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "metrics":
        import stocker_core.evaluation.metrics as module
    elif name == "backtests":
        import stocker_core.evaluation.backtests as module
    elif name == "council_votes":
        import stocker_core.evaluation.council_votes as module
    elif name == "splits":
        import stocker_core.evaluation.splits as module
    elif name == "rolling":
        import stocker_core.evaluation.rolling as module
    elif name == "stats":
        import stocker_core.evaluation.stats as module
    elif name == "steps":
        import stocker_core.evaluation.steps as module
    elif name == "report":
        import stocker_core.evaluation.report as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
