"""The public names of ``stocker_core.baselines``, imported on first use (``__init__.py``)."""

from .rules import (
    LongFlatPolicy as LongFlatPolicy,
    MacdPolicy as MacdPolicy,
    ZmrPolicy as ZmrPolicy,
    macd_long as macd_long,
    zscores as zscores,
    zmr_long as zmr_long,
)
from .forecast import ForecastConfig as ForecastConfig, ForecastPolicy as ForecastPolicy
from .oracle import OraclePolicy as OraclePolicy, oracle_long as oracle_long, day_sentiment as day_sentiment
