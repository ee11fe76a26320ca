"""The ``synthetic`` source: a seeded market with a planted signal of known strength.

What it is for: telling "the data carry no signal" apart from "the loop cannot learn".
Each ticker has a hidden daily factor ``f_D ~ N(0, 1)`` that leads the *next* session's
log return with information coefficient ``ic``::

    r_(D+1) = mu_s + sigma_s * (ic * f_D + sqrt(1 - ic²) * eps_(D+1))

The factor is a stationary AR(1), ``f_D = rho * f_(D-1) + sqrt(1 - rho²) * z_D`` with
``rho = persistence`` (0: independent days). Persistence is what lets a daily long/flat
rule keep the edge after costs: at ic = 0.1 and a 0.1% cost, following the sign of an
independent daily factor flips half the days and earns ~0 over buy-and-hold, while
rho = 0.8 earns ~3 basis points a day (see the README's "Synthetic market").

``s`` is a market regime shared by every ticker (a two-state Markov switch: calm, or
turbulent with lower drift and higher volatility); ``eps`` mixes a market-wide shock
with the ticker's own (return correlation ``MARKET_SHARE²``). ``f_D`` reaches the
pipeline only through the sentiment of headlines published on D before its close
(``stocker_core.text_events.synthetic``); with ``ic = 0`` nothing leads returns.

Sessions come from the XNYS calendar. Every draw is made from ``numpy`` generators
seeded by ``(seed, stream, ticker position)``, so the same settings give the same
bars, and ``ic`` changes only how the same draws are mixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import lru_cache

import numpy as np
import pandas as pd

from stocker_core.config import Settings
from stocker_core.data_sources import SYNTHETIC_INDEX
from stocker_core.errors import StockerError
from stocker_core.market.calendar import sessions, trading_calendar
from stocker_core.market.frames import PRICE_COLUMNS
from stocker_core.market.table_source import TableSource
from stocker_core.market.validation import validate_ticker

CALM, TURBULENT = 0, 1
REGIME_DRIFT = np.array([0.0005, -0.0010])
"""Daily log drift per regime."""
REGIME_VOL_SCALE = np.array([1.0, 1.8])
"""Volatility multiplier per regime (a ticker's calm volatility is 1.0-1.4% a day)."""
REGIME_STAY = np.array([0.985, 0.94])
"""Probability of staying in each regime from one session to the next (~25% turbulent)."""
MARKET_SHARE = 0.5
"""Weight of the market-wide shock in each ticker's noise."""
INDEX_START = 1000.0

# Generator streams: (seed, stream[, ticker position]).
_MARKET_STREAM, _TICKER_STREAM = 0, 1


class SyntheticSpecError(StockerError, ValueError):
    """Settings that describe no synthetic market (the message names the setting to change)."""


@dataclass(frozen=True)
class SyntheticSpec:
    """Everything the synthetic market depends on (``STOCKER_SYNTH_*`` settings)."""

    tickers: tuple[str, ...] = ("SYN1", "SYN2", "SYN3", "SYN4")
    ic: float = 0.1
    seed: int = 7
    start: date = date(2021, 1, 1)
    years: float = 3.0
    persistence: float = 0.8

    def __post_init__(self) -> None:
        if not -1.0 <= self.ic <= 1.0:
            raise SyntheticSpecError(f"STOCKER_SYNTH_IC={self.ic} is outside [-1, 1]")
        if not 0.0 <= self.persistence < 1.0:
            raise SyntheticSpecError(f"STOCKER_SYNTH_PERSISTENCE={self.persistence} is outside [0, 1)")
        if self.years <= 0:
            raise SyntheticSpecError(f"STOCKER_SYNTH_YEARS must be positive, got {self.years}")
        if not self.tickers:
            raise SyntheticSpecError("the synthetic market needs at least one ticker")
        for ticker in self.tickers:
            validate_ticker(ticker)
        if SYNTHETIC_INDEX in self.tickers:
            raise SyntheticSpecError(f"{SYNTHETIC_INDEX} is the synthetic index; pick other ticker names")
        last = pd.Timestamp(trading_calendar().last_session)
        if pd.Timestamp(self.end) > last + pd.Timedelta(days=1):
            raise SyntheticSpecError(
                f"the synthetic market {self.start} + {self.years} years ends after the exchange calendar "
                f"({last.date()}); pick an earlier STOCKER_SYNTH_START or fewer STOCKER_SYNTH_YEARS"
            )

    @classmethod
    def from_settings(cls, settings: Settings) -> SyntheticSpec:
        return cls(
            tickers=tuple(settings.synthetic_tickers),
            ic=float(settings.synth_ic),
            seed=int(settings.synth_seed),
            start=settings.synth_start,
            years=float(settings.synth_years),
            persistence=float(settings.synth_persistence),
        )

    @property
    def end(self) -> date:
        """First calendar day after the market: ``start`` + ``years`` (in whole months)."""
        return (pd.Timestamp(self.start) + pd.DateOffset(months=max(1, round(12 * self.years)))).date()


@dataclass(frozen=True)
class SyntheticMarket:
    """Bars per symbol (tickers and the index) and the hidden truth behind them."""

    spec: SyntheticSpec
    bars: dict[str, pd.DataFrame]
    """Normalized bars per ticker, plus ``SYNTHETIC_INDEX``."""
    truth: pd.DataFrame
    """Per ticker and session D: ``factor`` (f_D, leads D+1), ``next_surprise``
    (eps_(D+1), the unpredictable part of the next return; NaN on the last day),
    ``regime`` of D and ``log_return`` (D-1 → D close; the first day's is the open's)."""

    @property
    def sessions(self) -> pd.DatetimeIndex:
        return pd.DatetimeIndex(self.truth["date"].drop_duplicates())


def _regimes(rng: np.random.Generator, n: int) -> np.ndarray:
    """A two-state Markov chain that starts calm."""
    draws = rng.random(n)
    states = np.empty(n, dtype=np.int64)
    state = CALM
    for t in range(n):
        if t and draws[t] > REGIME_STAY[state]:
            state = 1 - state
        states[t] = state
    return states


def _factor(shocks: np.ndarray, persistence: float) -> np.ndarray:
    """A stationary unit-variance AR(1) path driven by standard-normal ``shocks``."""
    path = np.empty(len(shocks))
    path[0] = shocks[0]
    scale = np.sqrt(1.0 - persistence**2)
    for t in range(1, len(shocks)):
        path[t] = persistence * path[t - 1] + scale * shocks[t]
    return path


def _ticker_bars(
    rng: np.random.Generator,
    n: int,
    regime: np.ndarray,
    common: np.ndarray,
    spec: SyntheticSpec,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One ticker's price columns (``PRICE_COLUMNS`` by row), its factor, noise and log returns
    over ``n`` sessions (all draws from ``rng``)."""
    ic = spec.ic
    base_vol = rng.uniform(0.010, 0.014)
    price0 = rng.uniform(20.0, 250.0)
    volume0 = 10 ** rng.uniform(5.7, 7.3)
    path = _factor(rng.standard_normal(n + 1), spec.persistence)  # path[0] is the day before
    factor, lead = path[1:], path[:-1]  # f_(D-1) drives r_D
    eps = MARKET_SHARE * common + np.sqrt(1 - MARKET_SHARE**2) * rng.standard_normal(n)
    sigma = base_vol * REGIME_VOL_SCALE[regime]
    mu = REGIME_DRIFT[regime]
    log_return = mu + sigma * (ic * lead + np.sqrt(max(0.0, 1 - ic * ic)) * eps)
    close = price0 * np.exp(np.cumsum(log_return))
    previous = close * np.exp(-log_return)
    shape = rng.standard_normal((4, n))
    opening = previous * np.exp(0.3 * log_return + 0.25 * sigma * shape[0])
    high = np.maximum(opening, close) * np.exp(0.5 * sigma * np.abs(shape[1]))
    low = np.minimum(opening, close) * np.exp(-0.5 * sigma * np.abs(shape[2]))
    activity = 1 + 0.6 * np.abs(log_return - mu) / sigma + 0.4 * regime
    volume = np.round(volume0 * np.exp(0.25 * shape[3]) * activity)
    opening, high, low, close = (np.round(v, 4) for v in (opening, high, low, close))
    high = np.maximum(np.maximum(opening, high), close)
    low = np.minimum(np.minimum(opening, low), close)
    return np.stack([opening, high, low, close, close, volume]), factor, eps, log_return


def _clean_bars(dates: pd.DatetimeIndex, prices: np.ndarray) -> pd.DataFrame:
    """The frame ``normalize_bars`` makes of sorted, unique sessions ``dates`` and ``prices``
    (``PRICE_COLUMNS`` by row, NaN where a column is missing, ``adj_close`` = ``close``),
    built directly: the draws are clean, and the text-tolerant normalizer took most of a
    500-ticker market's time."""
    frame = pd.DataFrame(np.asarray(prices, dtype="float64").T, columns=PRICE_COLUMNS)
    frame.insert(0, "date", pd.DatetimeIndex(dates).normalize().astype("datetime64[ns]"))
    return frame


def _index_bars(days: pd.DatetimeIndex, regime: np.ndarray, common: np.ndarray) -> pd.DataFrame:
    """The market index: the regime's drift plus the market-wide shock (close only)."""
    sigma = 0.011 * REGIME_VOL_SCALE[regime]
    close = np.round(INDEX_START * np.exp(np.cumsum(REGIME_DRIFT[regime] + sigma * common)), 4)
    missing = np.full(len(days), np.nan)
    return _clean_bars(days, np.stack([missing, missing, missing, close, close, missing]))


def _truth(spec: SyntheticSpec, days: pd.DatetimeIndex, regime: np.ndarray, draws: list) -> pd.DataFrame:
    """The hidden truth of every ticker, one row per ticker and session (tickers in order);
    ``draws`` holds each ticker's (factor, eps, log_return)."""
    count = len(spec.tickers)
    return pd.DataFrame(
        {
            "ticker": pd.array(np.repeat(np.array(spec.tickers, dtype=object), len(days)), dtype="str"),
            "date": np.tile(days.to_numpy(), count),
            "factor": np.concatenate([factor for factor, _, _ in draws]),
            "next_surprise": np.concatenate([np.append(eps[1:], np.nan) for _, eps, _ in draws]),
            "regime": np.tile(regime, count),
            "log_return": np.concatenate([log_return for _, _, log_return in draws]),
        }
    )


@lru_cache(maxsize=8)
def synthetic_market(spec: SyntheticSpec) -> SyntheticMarket:
    """The market of ``spec`` (cached: the same spec is made once per process). Ticker ``k``
    of the list draws from its own generator, seeded by ``(seed, ticker stream, k)``: the
    first tickers' bars are the same whatever follows them (SYN1 … SYNn of any count)."""
    days = sessions(spec.start, spec.end)
    if len(days) < 2:
        raise SyntheticSpecError(
            f"the synthetic market {spec.start} + {spec.years} years has fewer than 2 sessions"
        )
    market = np.random.default_rng([spec.seed, _MARKET_STREAM])
    regime = _regimes(market, len(days))
    common = market.standard_normal(len(days))
    bars: dict[str, pd.DataFrame] = {}
    draws = []
    for position, ticker in enumerate(spec.tickers):
        rng = np.random.default_rng([spec.seed, _TICKER_STREAM, position])
        prices, factor, eps, log_return = _ticker_bars(rng, len(days), regime, common, spec)
        bars[ticker] = _clean_bars(days, prices)
        draws.append((factor, eps, log_return))
    bars[SYNTHETIC_INDEX] = _index_bars(days, regime, common)
    return SyntheticMarket(spec, bars, _truth(spec, days, regime, draws))


def market_from_settings(settings: Settings) -> SyntheticMarket:
    """The synthetic market the ``STOCKER_SYNTH_*`` settings describe."""
    return synthetic_market(SyntheticSpec.from_settings(settings))


class SyntheticSource(TableSource):
    """The synthetic market's bars behind the ``MarketDataSource`` interface."""

    name = "synthetic"

    def __init__(self, spec: SyntheticSpec) -> None:
        self.spec = spec
        super().__init__(synthetic_market(spec).bars)
