"""Indicators and charts of a day are identical whatever batch of months computed them."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import talib

from stocker_core.market.builds import build_charts, build_indicators, build_prices
from stocker_core.market.charts import chart_window, chart_windows
from stocker_core.market.indicators import compute_indicators, indicators_by_month, trailing_mean
from stocker_core.market.sample_source import SampleSource
from stocker_core.warehouse.db import Warehouse

TICKER = "GOOGL"  # OHLCV in the offline sample source from 2009-05-22
JUNE = date(2011, 6, 1)
YEAR_2011 = [date(2011, m, 1) for m in range(1, 13)]


@pytest.fixture(scope="module")
def source() -> SampleSource:
    return SampleSource()


def _warehouse_with_prices(path: Path, source: SampleSource) -> Warehouse:
    warehouse = Warehouse(path)
    months = [m.date() for m in pd.date_range("2009-05-01", "2011-12-01", freq="MS")]
    build_prices(source, warehouse, TICKER, months)
    return warehouse


def test_indicators_of_a_month_equal_exactly_in_a_one_month_and_a_whole_year_batch(tmp_path, source):
    warehouse = _warehouse_with_prices(tmp_path / "w.duckdb", source)
    build_indicators(source, warehouse, TICKER, [JUNE])
    alone = warehouse.read_table("market.indicators", TICKER, JUNE, date(2011, 7, 1))
    build_indicators(source, warehouse, TICKER, YEAR_2011)
    in_batch = warehouse.read_table("market.indicators", TICKER, JUNE, date(2011, 7, 1))
    assert len(alone) == 22  # June 2011 sessions (no holiday)
    pd.testing.assert_frame_equal(alone, in_batch, check_exact=True)

    # the definition, by hand: 2011-06-15's values come from the bars of 2010-06-01..2011-06-15
    bars = warehouse.read_prices(TICKER)
    window = bars[(bars["date"] >= "2010-06-01") & (bars["date"] <= "2011-06-15")]
    close = window["close"].to_numpy(float)
    row = alone.set_index("date").loc[pd.Timestamp("2011-06-15")]
    assert row["rsi14"] == talib.RSI(close, timeperiod=14)[-1]
    assert row["macd"] == talib.MACD(close, 12, 26, 9)[0][-1]
    assert row["sma20"] == talib.SMA(close, timeperiod=20)[-1]


def test_indicators_by_month_do_not_depend_on_where_the_bars_start(source):
    bars = source.fetch(TICKER, date(2009, 1, 1), date(2012, 1, 1))
    late = bars[bars["date"] >= "2010-06-01"].reset_index(drop=True)
    pd.testing.assert_frame_equal(
        indicators_by_month(bars, [JUNE]), indicators_by_month(late, [JUNE]), check_exact=True
    )
    # a plain computation over the series is what differed (EMA/Wilder seeds)
    plain = [compute_indicators(b).set_index("date").loc["2011-06", "rsi14"] for b in (bars, late)]
    assert not np.array_equal(plain[0].to_numpy(), plain[1].to_numpy())


def test_trailing_mean_by_hand():
    values = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    np.testing.assert_array_equal(trailing_mean(values, 3), [np.nan, np.nan, 2.0, 3.0, 17 / 3])
    assert np.isnan(trailing_mean(values[:2], 3)).all()


def test_chart_sma_inputs_do_not_depend_on_the_batch(source):
    bars = source.fetch(TICKER, date(2009, 1, 1), date(2012, 1, 1))
    day = pd.Timestamp("2011-06-15")
    alone = chart_window(bars, TICKER, day)
    year = [d for d in bars["date"] if d.year == 2011 and d <= day]
    in_batch = {w.day: w for w in chart_windows(bars, TICKER, year)}[day]  # series starts in 2010
    for name in ("sma20", "sma50"):
        np.testing.assert_array_equal(getattr(alone, name), getattr(in_batch, name))
    assert alone.sma20[-1] == pytest.approx(
        bars.set_index("date")["close"].loc[:day].tail(20).mean(), rel=1e-15
    )


@pytest.mark.slow
def test_chart_bytes_equal_in_a_one_month_and_a_two_month_batch(tmp_path, source):
    one = _warehouse_with_prices(tmp_path / "one.duckdb", source)
    two = _warehouse_with_prices(tmp_path / "two.duckdb", source)
    build_charts(source, one, TICKER, [JUNE], tmp_path / "charts_one", workers=1)
    build_charts(source, two, TICKER, [date(2011, 5, 1), JUNE], tmp_path / "charts_two", workers=1)
    a = one.read_table("market.charts", TICKER, JUNE, date(2011, 7, 1))
    b = two.read_table("market.charts", TICKER, JUNE, date(2011, 7, 1))
    assert len(a) == 22 and a["sha256"].tolist() == b["sha256"].tolist()
    assert a["input_hash"].tolist() == b["input_hash"].tolist()
    for path_a, path_b in zip(a["path"], b["path"], strict=True):
        assert Path(path_a).read_bytes() == Path(path_b).read_bytes()
