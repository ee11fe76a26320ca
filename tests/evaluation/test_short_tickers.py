"""A ticker too short for a rolling window is left out and named; the others are evaluated."""

import pytest
from evaluation_testing import store_prices, synthetic_prices

from stocker_core.config import Settings
from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.steps import NoWindowsError, compute_and_store_splits, rolling_evaluation
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
    done = [d for d, _ in seen]  # windows are played in one batch: progress counts policies through them
    assert seen[-1] == (10, 10) and done == sorted(done)


def test_only_short_tickers_name_each_and_keep_the_stored_rows(tmp_path):
    settings = Settings(home=tmp_path / "home")
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices("SHRT", days=130, seed=5))
    compute_and_store_splits(warehouse)
    with pytest.raises(NoWindowsError, match="SHRT: its test split") as error:
        rolling_evaluation(settings, warehouse, POLICIES, CONFIG)
    assert list(error.value.left_out) == ["SHRT"]


def test_a_ticker_scoped_run_foresees_who_the_evaluation_will_leave_out():
    """`materialize -t MSFT` (six months) holds the evaluation back, and its summary names
    MSFT as the ticker that evaluation will leave out, with the same reasons it would give."""
    import pandas as pd

    from stocker_core.evaluation.steps import foreseen_left_out

    frames = [
        synthetic_prices(t, days=n, seed=s)
        for t, n, s in (("LONG", 400, 1), ("SHRT", 130, 5), ("TINY", 40, 6))
    ]
    prices = pd.concat([f[["ticker", "date"]] for f in frames], ignore_index=True)
    out = foreseen_left_out(prices, ["LONG", "SHRT", "TINY", "NONE"], CONFIG)
    assert set(out) == {"SHRT", "TINY", "NONE"}  # LONG's test split holds windows
    # 130 days less two 30-day gaps leave 70: 20% of them, 14, are fewer than one 20-day window
    assert "holds 14 trading days, fewer than one 20-day window" in out["SHRT"]
    assert "40 trading day(s) cannot hold train, valid and test with 30-day gaps" in out["TINY"]
    assert out["NONE"] == "no stored prices"
