"""The synthetic source at universe size (issue 49): counts up to SYNTH_MAX_TICKERS, names and
bars that stay what they were as the count grows, and a 500-ticker universe that builds."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest

from stocker_core.config import Settings
from stocker_core.data_sources import SYNTHETIC_INDEX
from stocker_core.market.bars import configured_source
from stocker_core.market.frames import normalize_bars
from stocker_core.market.sources import check_symbols
from stocker_core.market.synthetic import SyntheticSpec, _clean_bars, synthetic_market
from stocker_core.settings.sources import SYNTH_MAX_TICKERS, synthetic_ticker_names

START = date(2020, 1, 1)
FEW_MONTHS = 0.25  # three months of sessions: enough to compare paths, fast at 2,000 tickers


@lru_cache(maxsize=2)
def _market(count: int, seed: int = 7):
    spec = SyntheticSpec(
        tickers=tuple(synthetic_ticker_names(str(count))), seed=seed, start=START, years=FEW_MONTHS
    )
    return synthetic_market.__wrapped__(spec)  # bypass the per-process cache


def test_a_count_up_to_the_maximum_names_syn1_to_synN_and_the_first_names_never_move() -> None:
    largest = synthetic_ticker_names(str(SYNTH_MAX_TICKERS))
    assert len(largest) == SYNTH_MAX_TICKERS == len(set(largest))
    assert largest[:3] == ["SYN1", "SYN2", "SYN3"] and largest[-1] == f"SYN{SYNTH_MAX_TICKERS}"
    for count in (10, 200, 500, 2000):
        assert synthetic_ticker_names(str(count)) == largest[:count]


def test_the_first_tickers_bars_and_truth_are_identical_at_10_200_500_and_2000_tickers() -> None:
    small = _market(10)
    for count in (200, 500, 2000):
        large = _market(count)
        assert len(large.bars) == count + 1
        for symbol in [*small.spec.tickers, SYNTHETIC_INDEX]:
            pd.testing.assert_frame_equal(large.bars[symbol], small.bars[symbol], check_exact=True)
        first = large.truth.loc[large.truth["ticker"].isin(small.spec.tickers)].reset_index(drop=True)
        pd.testing.assert_frame_equal(first, small.truth, check_exact=True)
    assert not np.allclose(large.bars["SYN2000"]["close"], large.bars["SYN1"]["close"])


def test_another_seed_moves_every_ticker() -> None:
    one, other = _market(10), _market(10, seed=8)
    for ticker in one.spec.tickers:
        assert not np.allclose(one.bars[ticker]["close"], other.bars[ticker]["close"])


def test_the_direct_frame_is_what_normalize_bars_makes_of_the_same_columns() -> None:
    """The generator skips the text-tolerant normalizer; its frame must be the one it makes."""
    days = pd.bdate_range("2021-01-04", periods=30)
    rng = np.random.default_rng(3)
    close = np.round(rng.uniform(10, 20, 30), 4)
    volume = np.round(rng.uniform(1e5, 1e6, 30))
    ohlcv = {"open": close - 0.1, "high": close + 0.2, "low": close - 0.3, "close": close, "volume": volume}
    made = _clean_bars(days, np.stack([close - 0.1, close + 0.2, close - 0.3, close, close, volume]))
    expected = normalize_bars(pd.DataFrame({"date": days, **ohlcv}))
    pd.testing.assert_frame_equal(made, expected, check_exact=True)
    nan = np.full(30, np.nan)
    index = _clean_bars(days, np.stack([nan, nan, nan, close, close, nan]))
    expected = normalize_bars(pd.DataFrame({"date": days, "close": close}))
    pd.testing.assert_frame_equal(index, expected, check_exact=True)


@pytest.mark.parametrize(
    ("symbol", "first", "last", "volume"),
    [
        ("SYN1", 45.2743, 39.6206, 1729810.0),
        ("SYN4", 67.3744, 56.7942, 2028621.0),
        ("SYN200", 34.2055, 33.6559, 17192508.0),
        (SYNTHETIC_INDEX, 995.4142, 970.7269, np.nan),
    ],
)
def test_the_figures_are_those_of_the_200_ticker_generator(symbol, first, last, volume) -> None:
    """Seed 7, 2020-01 to 2020-03: the closes and volumes the generator made before the cap was
    lifted (and before it stopped normalizing its own frames)."""
    bars = _market(500).bars[symbol]
    assert len(bars) == 62 and (bars["close"].iloc[0], bars["close"].iloc[-1]) == (first, last)
    np.testing.assert_equal(bars["volume"].iloc[-1], volume)


def test_a_500_ticker_universe_builds_from_the_settings_and_every_ticker_passes_the_gate() -> None:
    settings = Settings(source="synthetic", synth_tickers="500", synth_years=FEW_MONTHS, synth_start=START)
    assert settings.default_tickers == synthetic_ticker_names("500")
    source = configured_source(settings)
    assert check_symbols(source, settings.default_tickers) == settings.default_tickers
    market = synthetic_market(SyntheticSpec.from_settings(settings))
    assert len(market.truth) == 500 * 62 and market.truth["ticker"].nunique() == 500
    for ticker in settings.default_tickers[::50] + ["SYN500"]:  # the quality gate passes them
        bars = source.fetch(ticker, START, date(2020, 4, 1))
        assert len(bars) == 62 and bars["date"].equals(market.bars["SYN1"]["date"])


def test_ten_years_without_a_start_are_the_past_decade_and_three_years_start_in_2021() -> None:
    """STOCKER_SYNTH_YEARS=10 alone used to end in 2031, past the exchange calendar."""
    ten = Settings(source="synthetic", synth_tickers="500", synth_years=10)
    assert (ten.synth_start, ten.start_month) == (date(2014, 1, 1), "2014-01-01")
    assert SyntheticSpec.from_settings(ten).end == date(2024, 1, 1)
    assert Settings(source="synthetic", synth_years=3).synth_start == date(2021, 1, 1)
    assert Settings(source="synthetic", synth_years=0.5).synth_start == date(2021, 1, 1)
    chosen = Settings(source="synthetic", synth_years=10, synth_start="2010-01-01")
    assert chosen.synth_start == date(2010, 1, 1)


@pytest.mark.parametrize("count", [str(SYNTH_MAX_TICKERS + 1), "0"])
def test_counts_past_the_ends_are_refused_naming_the_range(count: str) -> None:
    with pytest.raises(ValueError, match=f"expected a count from 1 to {SYNTH_MAX_TICKERS}"):
        synthetic_ticker_names(count)


def test_a_spec_with_names_keeps_positions_so_appending_a_name_keeps_the_others() -> None:
    """A list of names draws by position, as a count does: append new names at the end."""
    spec = SyntheticSpec(tickers=("ALFA", "BETA"), start=START, years=FEW_MONTHS)
    more = synthetic_market.__wrapped__(replace(spec, tickers=("ALFA", "BETA", "GAMA")))
    pd.testing.assert_frame_equal(synthetic_market.__wrapped__(spec).bars["BETA"], more.bars["BETA"])
