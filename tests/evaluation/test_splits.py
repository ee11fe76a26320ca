"""Chronological splits: gaps of at least 30 trading days, no overlap, no test day in training."""

import pandas as pd
import pytest

from stocker_core.evaluation.splits import (
    SplitConfig,
    SplitError,
    SplitLeakError,
    Splits,
    compute_splits,
    load_splits,
    save_splits,
    training_days,
)
from stocker_core.warehouse.db import Warehouse

DAYS = list(pd.bdate_range("2015-01-01", periods=500).date)


def test_proportions_gaps_and_order():
    train, valid, test = compute_splits("SYN", DAYS)
    # 500 days - 2 gaps of 30 = 440: 60% = 264, 20% = 88, the rest 88
    assert (train.trading_days, valid.trading_days, test.trading_days) == (264, 88, 88)
    assert train.start == DAYS[0] and test.end == DAYS[-1]
    assert DAYS.index(valid.start) - DAYS.index(train.end) - 1 == 30
    assert DAYS.index(test.start) - DAYS.index(valid.end) - 1 == 30
    assert train.end < valid.start and valid.end < test.start


def test_no_day_is_in_two_splits_and_gap_days_are_in_none():
    splits = Splits(tuple(compute_splits("SYN", DAYS)))
    labels = [splits.split_of("SYN", d) for d in DAYS]
    assert labels.count("train") == 264 and labels.count("valid") == 88 and labels.count("test") == 88
    assert labels.count(None) == 60


def test_training_dataset_builder_refuses_test_days():
    splits = Splits(tuple(compute_splits("SYN", DAYS)))
    train = training_days(splits, "SYN", DAYS, "train")
    assert len(train) == 264 and max(train) < splits.range_of("SYN", "test").start
    assert len(training_days(splits, "SYN", DAYS, "valid")) == 88
    with pytest.raises(SplitLeakError):
        training_days(splits, "SYN", DAYS, "test")
    with pytest.raises(SplitLeakError, match="1 day"):
        splits.assert_not_test("SYN", [DAYS[10], DAYS[-1]])
    later = pd.Timestamp(DAYS[-1]) + pd.Timedelta(days=30)  # after the stored data: still not training data
    with pytest.raises(SplitLeakError):
        splits.assert_not_test("SYN", [later])
    splits.assert_not_test("SYN", DAYS[:300])


def test_an_episode_belongs_to_a_split_only_if_all_its_days_are_inside():
    splits = Splits(tuple(compute_splits("SYN", DAYS)))
    valid = splits.range_of("SYN", "valid")
    inside = [d for d in DAYS if valid.start <= d <= valid.end][:40]
    straddling = DAYS[DAYS.index(valid.start) - 5 : DAYS.index(valid.start) + 35]
    episodes = {"SYN|a": inside, "SYN|b": straddling, "SYN|c": DAYS[:40]}
    assert splits.episodes_in_split("valid", episodes) == ["SYN|a"]
    assert splits.episodes_in_split("train", episodes) == ["SYN|c"]


def test_bad_settings_and_short_data_fail_clearly():
    with pytest.raises(SplitError, match="at least 30"):
        SplitConfig(gap_days=10)
    with pytest.raises(SplitError, match="sum to 1"):
        SplitConfig(0.5, 0.2, 0.2)
    with pytest.raises(SplitError, match="cannot hold"):
        compute_splits("SYN", DAYS[:62])
    with pytest.raises(SplitError, match="unknown split"):
        Splits(tuple(compute_splits("SYN", DAYS))).range_of("SYN", "holdout")


def test_splits_round_trip_through_the_warehouse(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    with pytest.raises(SplitError, match="materialize the `splits` asset"):
        load_splits(warehouse)
    splits = Splits(tuple(compute_splits("SYN", DAYS)))
    save_splits(warehouse, splits)
    save_splits(warehouse, splits)  # replaces, never duplicates
    assert load_splits(warehouse) == splits


def test_a_ticker_too_short_to_split_is_left_out_and_named():
    import pandas as pd

    from stocker_core.evaluation.splits import SplitError, splits_from_prices

    long_days = pd.bdate_range("2015-01-01", periods=400)
    short_days = pd.bdate_range("2023-12-01", periods=61)
    prices = pd.concat(
        [
            pd.DataFrame({"ticker": "GOOGL", "date": long_days}),
            pd.DataFrame({"ticker": "INTC", "date": short_days}),
        ]
    )
    splits = splits_from_prices(prices)
    assert splits.tickers == ["GOOGL"]
    assert dict(splits.skipped)["INTC"].startswith("INTC: 61 trading day(s) cannot hold")
    with pytest.raises(SplitError, match="INTC: 61 trading day"):
        splits_from_prices(prices[prices["ticker"] == "INTC"])
