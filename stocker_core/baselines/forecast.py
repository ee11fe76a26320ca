"""The forecasting baseline: an AR model on the last 30 closes' log returns predicts
tomorrow's close; the policy is long (all-in, whole shares) when the predicted return
beats a threshold, flat otherwise.

Point in time: each decision fits the model on the closes dated on or before the
decision day (the observation's ``price_history``) and nothing else.
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from stocker_core.baselines.rules import history_note
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.plans import Plan, long_flat_plan
from stocker_core.env.policies import long_flat_action, register_policy
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import StockerError

if TYPE_CHECKING:
    from stocker_core.config import Settings

log = logging.getLogger(__name__)


class ForecastConfigError(StockerError, ValueError):
    """Forecast settings that cannot work (e.g. more lags than the window holds)."""


class InsufficientHistoryError(StockerError, ValueError):
    """Fewer closes than the forecast window needs."""


class BadPriceError(StockerError, ValueError):
    """A close that is not a positive finite number (log returns need one)."""


@dataclass(frozen=True)
class ForecastConfig:
    """Window of closes the model sees, AR order, and the entry threshold θ on the
    predicted simple return (long when predicted return > θ)."""

    lookback: int = 30
    lags: int = 1
    threshold: float = 0.0

    def __post_init__(self) -> None:
        if self.lags < 1:
            raise ForecastConfigError(f"lags must be >= 1, got {self.lags}")
        # lookback-1 returns give lookback-1-lags rows for lags+1 parameters: one row to spare
        if self.lookback < 2 * self.lags + 3:
            raise ForecastConfigError(
                f"lookback {self.lookback} is too short for an AR({self.lags}) fit: "
                f"use lookback >= {2 * self.lags + 3}"
            )
        if not math.isfinite(self.threshold):
            raise ForecastConfigError(f"threshold must be finite, got {self.threshold}")


@dataclass(frozen=True)
class Forecast:
    """Tomorrow's predicted close from the closes up to today."""

    close: float
    predicted_close: float

    @property
    def predicted_return(self) -> float:
        return self.predicted_close / self.close - 1.0


def forecast_next_close(closes: np.ndarray | list[float], config: ForecastConfig | None = None) -> Forecast:
    """Fit AutoReg(lags, constant) on the log returns of the last ``lookback`` closes and
    predict the next close. Raises InsufficientHistoryError with fewer closes."""
    from statsmodels.tools.sm_exceptions import SingularMatrixWarning
    from statsmodels.tsa.ar_model import AutoReg

    config = config or ForecastConfig()
    px = np.asarray(closes, dtype=np.float64)
    if len(px) < config.lookback:
        raise InsufficientHistoryError(
            f"the forecast needs {config.lookback} closes up to the decision day, got {len(px)}"
        )
    window = px[-config.lookback :]
    if not np.all(np.isfinite(window)) or np.any(window <= 0):
        raise BadPriceError("closes must be positive finite numbers to take log returns")
    returns = np.diff(np.log(window))
    with warnings.catch_warnings():
        # a perfectly steady series makes the design rank-deficient; pinv still fits it exactly
        warnings.simplefilter("ignore", SingularMatrixWarning)
        fitted = AutoReg(returns, lags=config.lags, trend="c").fit()
    predicted_log_return = float(fitted.forecast(1)[0])
    last = float(window[-1])
    return Forecast(close=last, predicted_close=last * math.exp(predicted_log_return))


def predicted_returns(closes: np.ndarray, config: ForecastConfig | None = None) -> np.ndarray:
    """``forecast_next_close(closes[: i + 1]).predicted_return`` for every day ``i`` at once
    (NaN where fewer than ``lookback`` closes exist): the same AR(lags) least-squares fit,
    batched over days with numpy's pseudo-inverse (as statsmodels' OLS uses)."""
    config = config or ForecastConfig()
    px = np.asarray(closes, dtype=np.float64)
    out = np.full(len(px), np.nan)
    if len(px) < config.lookback:
        return out
    if not np.all(np.isfinite(px)) or np.any(px <= 0):
        raise BadPriceError("closes must be positive finite numbers to take log returns")
    windows = np.lib.stride_tricks.sliding_window_view(np.log(px), config.lookback)
    returns = np.diff(windows, axis=1)  # (days, lookback - 1)
    p = config.lags
    rows = returns.shape[1] - p
    lagged = np.stack([returns[:, p - j - 1 : p - j - 1 + rows] for j in range(p)], axis=2)
    design = np.concatenate([np.ones((len(returns), rows, 1)), lagged], axis=2)
    target = returns[:, p:]
    beta = np.einsum("dkr,dr->dk", np.linalg.pinv(design), target)
    latest = returns[:, ::-1][:, :p]  # r_T, r_(T-1), …
    predicted_log = beta[:, 0] + np.einsum("dk,dk->d", beta[:, 1:], latest)
    out[config.lookback - 1 :] = np.expm1(predicted_log)
    return out


class ForecastPolicy:
    """Long when the AR forecast of tomorrow's return beats θ, flat otherwise; all-in
    whole shares at today's close. Holds (and says why) until ``lookback`` closes exist."""

    def __init__(self, cost: float, config: ForecastConfig | None = None) -> None:
        self.cost = cost
        self.config = config or ForecastConfig()
        self.last_forecast: Forecast | None = None
        self.note: str | None = None
        """Why the policy held without a forecast (too little history), else None."""

    def act(self, observation: Observation) -> Action:
        try:
            forecast = forecast_next_close(observation.price_history, self.config)
        except InsufficientHistoryError as exc:
            self.last_forecast = None
            if self.note is None:
                log.warning("forecast policy holds on %s: %s", observation.date, exc)
            self.note = f"holding on {observation.date}: {exc}"
            return Action.hold()
        self.last_forecast, self.note = forecast, None
        return long_flat_action(forecast.predicted_return > self.config.threshold, observation, self.cost)


def make_forecast_policy(
    env: TradingEnv, seed: int | None = None, settings: Settings | None = None
) -> ForecastPolicy:
    """The registry's ``forecast`` policy with the default config and the env's cost."""
    return ForecastPolicy(env.params.transaction_cost)


def forecast_plan(episode: Episode, params: RewardParams, settings: Settings | None = None) -> Plan:
    """``forecast``'s actions over the whole episode with the default config (the vectorised
    twin of ``ForecastPolicy``: the same fits, batched)."""
    config = ForecastConfig()
    closes, offset = episode.all_closes, len(episode.history)
    predicted = predicted_returns(closes, config)[offset:]
    want = np.nan_to_num(predicted, nan=-np.inf) > config.threshold
    plan = long_flat_plan(want, episode.closes, params.transaction_cost, params.starting_cash)
    valid = int(np.isfinite(predicted).sum())
    note = history_note("forecast", config.lookback, offset, episode.trading_days, valid)
    plan.notes.extend([note] if note else [])
    return plan


def register_policies() -> None:
    """``forecast`` with its whole-episode plan (called by the composition root)."""
    register_policy("forecast", make_forecast_policy, plan=forecast_plan)
