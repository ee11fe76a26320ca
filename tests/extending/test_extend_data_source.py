"""Adding a market data source (docs/extending.md): one module declares it, one call
registers it, and ``STOCKER_SOURCE`` may then name it — its bars come through the normal
path (the quality gate, ``load_bars``, the warehouse's price months) into an episode and a
buy-and-hold backtest. Unregistered, the settings refuse the name again."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest

from stocker_core.config import Settings, settings_error_line
from stocker_core.data_sources import DataSource, registered_source, source_names
from stocker_core.env.episode import load_episode
from stocker_core.evaluation.backtests import backtest
from stocker_core.market.bars import load_bars
from stocker_core.market.builds import build_prices
from stocker_core.market.calendar import sessions
from stocker_core.market.frames import normalize_bars
from stocker_core.market.source_builder import get_source
from stocker_core.market.table_source import TableSource
from stocker_core.warehouse.db import Warehouse

# --- the toy source: everything it is, in this module -------------------------------------

FIRST, END = date(2021, 1, 1), date(2022, 1, 1)


def sine_bars(first: date = FIRST, end: date = END) -> pd.DataFrame:
    """Daily bars of one made-up stock on the NYSE sessions: a 63-session sine around 100
    on a slow rise."""
    days = sessions(first, end)
    t = np.arange(len(days), dtype=float)
    close = 100.0 + 10.0 * np.sin(2 * np.pi * t / 63) + 0.05 * t
    open_ = np.concatenate([[close[0]], close[:-1]])
    return normalize_bars(
        pd.DataFrame(
            {
                "date": days,
                "open": open_,
                "high": np.maximum(open_, close) * 1.002,
                "low": np.minimum(open_, close) * 0.998,
                "close": close,
                "volume": np.full(len(days), 1e6),
            }
        )
    )


class SineSource(TableSource):
    """The toy source: the ``TableSource`` base serves ``fetch``, ``symbol_info`` and ``symbols``."""

    name = "sine"

    def __init__(self) -> None:
        super().__init__({"SINE": sine_bars()})


SINE = DataSource("sine", lambda settings: SineSource())

# ------------------------------------------------------------------------------------------


@pytest.fixture
def sine(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    with registered_source(SINE):
        yield Settings(source="sine")
    assert "sine" not in source_names()


def test_the_settings_take_the_registered_name_only(sine, monkeypatch):
    assert source_names()[-1] == "sine" and sine.source == "sine"
    monkeypatch.setenv("STOCKER_SOURCE", "sine")
    assert Settings().source == "sine"
    monkeypatch.setenv("STOCKER_SOURCE", "sinus")
    with pytest.raises(ValueError) as refused:
        Settings()
    assert settings_error_line(refused.value) == (
        "STOCKER_SOURCE='sinus' (expected one of: sample, files, yfinance, synthetic, sine)"
    )


def test_its_bars_come_through_the_gate_load_bars_and_the_warehouse(sine):
    expected = sine_bars()
    source = get_source(sine)  # behind the quality gate
    assert source.name == "sine" and source.symbols() == ["SINE"]
    bars, origin = load_bars(sine, "SINE", None, END)
    assert origin == "sine"
    pd.testing.assert_frame_equal(bars.reset_index(drop=True), expected)

    # the market pipeline's price months: stored with the source's name, then read back from there
    months = [date(2021, m, 1) for m in range(1, 13)]
    build = build_prices(source, Warehouse(sine.warehouse_path), "SINE", months)
    assert not build.empty
    stored, origin = load_bars(sine, "SINE", date(2021, 3, 1), date(2021, 5, 1))
    assert origin == "warehouse"
    window = expected[(expected["date"] >= "2021-03-01") & (expected["date"] < "2021-05-01")]
    assert stored["close"].tolist() == window["close"].tolist()


def test_an_episode_on_it_is_backtested_with_buy_and_hold(sine):
    episode = load_episode("SINE|2021-03-01", sine)  # two months: March and April 2021
    assert episode.source == "sine" and episode.trading_days == len(
        sessions(date(2021, 3, 1), date(2021, 5, 1))
    )
    result = backtest(episode, ["buy_and_hold"], settings=sine)
    assert result.failures == {}
    run = result.run_of("buy_and_hold")
    closes = episode.bars["close"].to_numpy()
    np.testing.assert_allclose(run.closes, closes)
    shares = run.traded[0]
    assert shares > 0 and (run.traded[1:] == 0).all()  # buys on day one, then holds
    assert run.values[-1] == pytest.approx(run.values[1] + shares * (closes[-1] - closes[0]))
