"""The synthetic source: seeded, on the XNYS calendar, realistic, configured by STOCKER_SYNTH_*."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from stocker_core.config import Settings
from stocker_core.data_sources import SYNTHETIC_INDEX
from stocker_core.errors import UnknownTickerError
from stocker_core.market.bars import configured_source
from stocker_core.market.calendar import sessions
from stocker_core.market.gate import QualityGatedSource
from stocker_core.market.source_builder import get_source
from stocker_core.market.synthetic import (
    REGIME_VOL_SCALE,
    TURBULENT,
    SyntheticSource,
    SyntheticSpec,
    _factor,
    synthetic_market,
)
from stocker_core.settings.sources import synthetic_ticker_names

SPEC = SyntheticSpec(tickers=("SYN1", "SYN2", "SYN3"), ic=0.1, seed=11, start=date(2015, 1, 1), years=4.0)


def _fresh(spec: SyntheticSpec):
    return synthetic_market.__wrapped__(spec)  # bypass the per-process cache


def test_same_settings_give_identical_bars_and_another_seed_does_not():
    first, second = _fresh(SPEC), _fresh(SPEC)
    assert list(first.bars) == ["SYN1", "SYN2", "SYN3", SYNTHETIC_INDEX]
    for symbol, frame in first.bars.items():
        pd.testing.assert_frame_equal(frame, second.bars[symbol])
    pd.testing.assert_frame_equal(first.truth, second.truth)
    other = _fresh(replace(SPEC, seed=12))
    assert not np.allclose(other.bars["SYN1"]["close"], first.bars["SYN1"]["close"])


def test_ic_mixes_the_same_draws_and_a_ticker_keeps_its_path_when_others_are_added():
    planted, flat = _fresh(SPEC), _fresh(replace(SPEC, ic=0.0))
    np.testing.assert_array_equal(planted.truth["factor"], flat.truth["factor"])
    assert not np.allclose(planted.truth["log_return"], flat.truth["log_return"])
    more = _fresh(replace(SPEC, tickers=(*SPEC.tickers, "SYN4")))
    pd.testing.assert_frame_equal(more.bars["SYN2"], planted.bars["SYN2"])


def test_returns_follow_the_planted_formula():
    market = _fresh(SPEC)
    truth = market.truth.loc[market.truth["ticker"] == "SYN1"].reset_index(drop=True)
    closes = market.bars["SYN1"]["close"].to_numpy()
    # the stored closes are the log returns compounded (rounded to 4 decimals)
    np.testing.assert_allclose(np.diff(np.log(closes)), truth["log_return"].to_numpy()[1:], atol=2e-5)
    # r_(D+1) - mu = sigma * (ic f_D + sqrt(1 - ic²) eps_(D+1)); sigma and mu are the regime's
    z = truth["log_return"].to_numpy()[1:] - np.where(
        truth["regime"].to_numpy()[1:] == TURBULENT, -0.001, 0.0005
    )
    sigma = z / (
        0.1 * truth["factor"].to_numpy()[:-1] + np.sqrt(0.99) * truth["next_surprise"].to_numpy()[:-1]
    )
    scale = sigma / REGIME_VOL_SCALE[truth["regime"].to_numpy()[1:]]
    assert np.allclose(scale, scale[0]) and 0.010 <= scale[0] <= 0.014


def test_bars_are_xnys_sessions_with_consistent_ohlcv_and_realistic_volatility():
    market = _fresh(SPEC)
    days = sessions(SPEC.start, SPEC.end)
    assert len(days) > 1000
    for ticker in SPEC.tickers:
        bars = market.bars[ticker]
        assert pd.DatetimeIndex(bars["date"]).equals(days)
        assert (bars["low"] <= bars[["open", "close"]].min(axis=1)).all()
        assert (bars["high"] >= bars[["open", "close"]].max(axis=1)).all()
        assert (bars["volume"] > 0).all() and (bars["adj_close"] == bars["close"]).all()
        returns = np.diff(np.log(bars["close"].to_numpy()))
        assert 0.010 <= returns.std() <= 0.025
        inspection = QualityGatedSource(SyntheticSource(SPEC)).inspect(ticker, SPEC.start, SPEC.end)
        assert inspection.failed == {} and inspection.accepted == {}
    regime = market.truth.loc[market.truth["ticker"] == "SYN1", "regime"].to_numpy()
    assert 0.1 < regime.mean() < 0.45  # both regimes visited; turbulent about a quarter of the time
    r = market.truth.loc[market.truth["ticker"] == "SYN1", "log_return"].to_numpy()
    assert r[regime == TURBULENT].std() > 1.4 * r[regime != TURBULENT].std()
    index = market.bars[SYNTHETIC_INDEX]
    assert index[["open", "high", "low"]].isna().all().all() and len(index) == len(days)


def test_the_factor_is_a_unit_variance_ar1_with_the_chosen_persistence():
    shocks = np.random.default_rng(0).standard_normal(200_000)
    path = _factor(shocks, 0.8)
    assert path.std() == pytest.approx(1.0, abs=0.02)
    assert np.corrcoef(path[1:], path[:-1])[0, 1] == pytest.approx(0.8, abs=0.01)
    np.testing.assert_array_equal(_factor(shocks, 0.0), shocks)


def test_settings_select_the_synthetic_source_its_tickers_and_benchmark(monkeypatch):
    monkeypatch.setenv("STOCKER_SOURCE", "synthetic")
    monkeypatch.setenv("STOCKER_SYNTH_TICKERS", "2")
    monkeypatch.setenv("STOCKER_SYNTH_IC", "0.05")
    monkeypatch.setenv("STOCKER_SYNTH_START", "2016-03-01")
    monkeypatch.setenv("STOCKER_SYNTH_YEARS", "1")
    settings = Settings()
    assert settings.default_tickers == ["SYN1", "SYN2"] and settings.benchmark == SYNTHETIC_INDEX
    assert settings.start_month == "2016-03-01"  # the first month partition is the market's
    spec = SyntheticSpec.from_settings(settings)
    assert spec == SyntheticSpec(("SYN1", "SYN2"), 0.05, 7, date(2016, 3, 1), 1.0, 0.8)
    source = get_source(settings)
    assert source.name == "synthetic" and source.symbols() == ["SYN1", "SYN2", SYNTHETIC_INDEX]
    info = source.symbol_info("SYN2")
    assert (info.first_date, info.last_date) == (date(2016, 3, 1), date(2017, 2, 28))
    assert configured_source(settings) is configured_source(Settings())  # cached per spec
    with pytest.raises(UnknownTickerError, match="SYN1"):
        source.fetch("AAPL", date(2016, 3, 1), date(2016, 4, 1))
    explicit = Settings(
        source="synthetic", default_tickers=["SYN2"], benchmark="SYN1", start_month="2010-01-01"
    )
    assert (explicit.default_tickers, explicit.benchmark, explicit.start_month) == (
        ["SYN2"],
        "SYN1",
        "2010-01-01",
    )
    assert not any(t.startswith("SYN") for t in Settings(source="sample").default_tickers)


def test_ticker_settings_take_a_count_or_names_and_refuse_nonsense():
    assert synthetic_ticker_names("3") == ["SYN1", "SYN2", "SYN3"]
    assert synthetic_ticker_names(" alfa, BETA ,alfa,") == ["ALFA", "BETA"]
    for bad in ("0", " , ", "5001"):
        with pytest.raises(ValidationError):
            Settings(source="synthetic", synth_tickers=bad)
    with pytest.raises(ValidationError):
        Settings(source="synthetic", synth_ic=1.5)
    with pytest.raises(ValidationError):
        Settings(source="synthetic", synth_persistence=1.0)
    with pytest.raises(ValueError, match="invalid ticker"):
        SyntheticSpec(tickers=("a;DROP",))
    with pytest.raises(ValueError, match="synthetic index"):
        SyntheticSpec(tickers=(SYNTHETIC_INDEX,))
    with pytest.raises(ValueError, match="ends after the exchange calendar"):
        synthetic_market(SyntheticSpec(start=date.today(), years=3))


def test_the_default_market_is_three_whole_years_of_four_tickers():
    spec = SyntheticSpec.from_settings(Settings(source="synthetic"))
    assert spec == SyntheticSpec() and spec.tickers == ("SYN1", "SYN2", "SYN3", "SYN4")
    days = synthetic_market(spec).sessions
    assert (days[0], days[-1], len(days)) == (pd.Timestamp("2021-01-04"), pd.Timestamp("2023-12-29"), 753)
