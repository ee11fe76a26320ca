"""The baselines the trained policies are measured against, each a policy of the registry:
the rules (``rules``: MACD crossover, Z-score mean reversion), the AR forecast
(``forecast``), the headline-sentiment oracle (``oracle``) and the deep-RL agents (``drl``:
stable-baselines3 A2C and PPO, trained on the train split).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "LongFlatPolicy": "rules",
    "MacdPolicy": "rules",
    "ZmrPolicy": "rules",
    "macd_long": "rules",
    "zscores": "rules",
    "zmr_long": "rules",
    "ForecastConfig": "forecast",
    "ForecastPolicy": "forecast",
    "OraclePolicy": "oracle",
    "oracle_long": "oracle",
    "day_sentiment": "oracle",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "rules":
        import stocker_core.baselines.rules as module
    elif name == "forecast":
        import stocker_core.baselines.forecast as module
    elif name == "oracle":
        import stocker_core.baselines.oracle as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
