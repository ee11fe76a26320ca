"""A ticker too short for a rolling window is left out and named; the others are evaluated."""

import pytest
from evaluation_testing import store_prices, synthetic_prices

from stocker_core.config import Settings
from stocker_core.evaluation.pipeline import NoWindowsError, compute_and_store_splits, rolling_evaluation
from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.store import read_eval
from stocker_core.warehouse.db import Warehouse

CONFIG = RollingConfig(window_days=20, step_days=5, resamples=100)
POLICIES = ["buy_and_hold", "hold"]


def test_a_short_ticker_is_left_out_and_named(tmp_path):
    settings = Settings(home=tmp_path / "home")
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices("LONG", days=400))
    store_prices(warehouse, synthetic_prices("SHRT", days=130, seed=5))
    splits = compute_and_store_splits(warehouse)
    assert splits.tickers == ["LONG", "SHRT"]  # SHRT splits, but its test split is short
    short_test = splits.range_of("SHRT", "test")
    assert short_test.trading_days < CONFIG.window_days
    seen = []
    outcome = rolling_evaluation(
        settings, warehouse, POLICIES, CONFIG, progress=lambda d, t: seen.append((d, t))
    )
    assert outcome.windows == 10  # LONG: (68 - 20) / 5 + 1
    assert list(outcome.left_out) == ["SHRT"]
    why = outcome.left_out["SHRT"]
    assert f"holds {short_test.trading_days} trading days" in why and "20-day window" in why
    assert set(read_eval(warehouse, "eval.rolling")["ticker"]) == {"LONG"}
    assert seen[-1] == (10, 10) and [d for d, _ in seen] == list(range(1, 11))


def test_only_short_tickers_name_each_and_keep_the_stored_rows(tmp_path):
    settings = Settings(home=tmp_path / "home")
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices("SHRT", days=130, seed=5))
    compute_and_store_splits(warehouse)
    with pytest.raises(NoWindowsError, match="SHRT: its test split") as error:
        rolling_evaluation(settings, warehouse, POLICIES, CONFIG)
    assert list(error.value.left_out) == ["SHRT"]
