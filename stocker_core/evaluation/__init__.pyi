"""The public names of ``stocker_core.evaluation``, imported on first use (``__init__.py``)."""

from .metrics import (
    METRIC_NAMES as METRIC_NAMES,
    curve_metrics as curve_metrics,
    max_drawdown as max_drawdown,
)
from .backtests import (
    Backtest as Backtest,
    PolicyRun as PolicyRun,
    backtest as backtest,
    ordered_policies as ordered_policies,
    policy_label as policy_label,
)
from .council_votes import VoteBook as VoteBook, load_vote_book as load_vote_book
from .splits import (
    SplitConfig as SplitConfig,
    Splits as Splits,
    SplitRange as SplitRange,
    SplitLeakError as SplitLeakError,
    compute_splits as compute_splits,
    load_splits as load_splits,
    training_days as training_days,
)
from .rolling import RollingConfig as RollingConfig
from .stats import bootstrap_ci as bootstrap_ci, sign_test as sign_test, timing_test as timing_test
from .steps import (
    backtest_partitions as backtest_partitions,
    compute_and_store_splits as compute_and_store_splits,
    rolling_evaluation as rolling_evaluation,
)
from .report import build_report as build_report
