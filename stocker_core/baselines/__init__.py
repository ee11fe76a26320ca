"""The baselines the trained policies are measured against, each a policy of the registry:
the rules (``rules``: MACD crossover, Z-score mean reversion), the AR forecast
(``forecast``), the headline-sentiment oracle (``oracle``) and the deep-RL agents (``drl``:
stable-baselines3 A2C and PPO, trained on the train split).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
