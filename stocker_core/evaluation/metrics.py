"""Backtest metrics of one equity curve (SPEC §3), numbers from empyrical-reloaded where it fits.

Convention: the equity curve is ``V_0`` = the starting cash before day 1, then the
portfolio value after each day's close, so a T-day episode has T + 1 values;
``r_t = V_t / V_(t-1) - 1`` for t = 1..T.

Undefined values are ``None`` (shown as "–"), never NaN or inf: Sharpe, Sortino and
the volatility need two returns; Sharpe needs a non-zero standard deviation; Sortino
needs a losing day; Calmar needs a drawdown; the win rate needs a day the value moved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from stocker_core.errors import StockerError

TRADING_DAYS_PER_YEAR = 252

METRIC_NAMES = (
    "total_reward",
    "final_value",
    "total_return",
    "arr",
    "sharpe",
    "sharpe_annual",
    "sortino",
    "volatility",
    "mdd",
    "calmar",
    "win_rate",
    "trades",
    "turnover",
    "exposure",
)
"""Every metric of a backtest row, in table order."""

METRIC_HELP = {
    "total_reward": "sum of the environment's per-step rewards (SPEC §1)",
    "final_value": "V_T, the portfolio value after the last close",
    "total_return": "V_T / V_0 − 1",
    "arr": "annualised return (V_T / V_0)^(252/T) − 1",
    "sharpe": "mean(r_t) / std(r_t), ddof=1, daily, not annualised",
    "sharpe_annual": "daily Sharpe × √252",
    "sortino": "mean(r_t) / sqrt(mean(min(r_t, 0)²)), daily",
    "volatility": "std(r_t), ddof=1, annualised × √252",
    "mdd": "max over t of (peak_t − V_t) / peak_t, peak including V_0 (positive fraction)",
    "calmar": "arr / mdd",
    "win_rate": "share of days the value rose, among days it moved",
    "trades": "executed (non-zero, valid) trades",
    "turnover": "traded value Σ|shares × close| / V_0",
    "exposure": "mean over days of position × close / V_t at the close",
}


class MetricsError(StockerError, ValueError):
    """An equity curve the metrics cannot be computed on."""


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def validate_curve(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The curve as floats: at least V_0 and one day, all positive and finite."""
    curve = np.asarray(values, dtype=np.float64)
    if curve.ndim != 1 or len(curve) < 2:
        raise MetricsError(
            f"an equity curve needs V_0 and at least one day's close value; got {len(curve)} value(s)"
        )
    if not np.all(np.isfinite(curve)) or np.any(curve <= 0):
        raise MetricsError("equity curve values must be positive finite numbers")
    return curve


def daily_returns(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """r_t = V_t / V_(t-1) − 1 for t = 1..T."""
    curve = validate_curve(values)
    return curve[1:] / curve[:-1] - 1.0


def drawdown_curve(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """(peak_t − V_t) / peak_t for t = 0..T, peak being the running max including V_0."""
    curve = validate_curve(values)
    peak = np.maximum.accumulate(curve)
    return (peak - curve) / peak


def max_drawdown(values: Sequence[float] | np.ndarray) -> float:
    """The largest drawdown as a positive fraction (0 for a curve that never falls)."""
    return float(drawdown_curve(values).max())


def annualised_return(values: Sequence[float] | np.ndarray) -> float:
    """ARR = (V_T / V_0)^(252/T) − 1."""
    import empyrical

    return float(empyrical.annual_return(daily_returns(values), annualization=TRADING_DAYS_PER_YEAR))


def sharpe_daily(returns: np.ndarray) -> float | None:
    """mean / std (ddof=1) of daily returns; None with fewer than 2 days or zero spread."""
    import empyrical

    if len(returns) < 2 or np.std(returns) == 0.0:
        return None
    return _finite_or_none(empyrical.sharpe_ratio(returns, annualization=1))


def sortino_daily(returns: np.ndarray) -> float | None:
    """mean / downside deviation of daily returns; None with fewer than 2 days or no losing day."""
    import empyrical

    if len(returns) < 2 or not np.any(returns < 0):
        return None
    return _finite_or_none(empyrical.sortino_ratio(returns, annualization=1))


def annual_volatility(returns: np.ndarray) -> float | None:
    """std (ddof=1) of daily returns × √252; None with fewer than 2 days."""
    import empyrical

    if len(returns) < 2:
        return None
    return _finite_or_none(empyrical.annual_volatility(returns, annualization=TRADING_DAYS_PER_YEAR))


def win_rate(returns: np.ndarray) -> float | None:
    """Share of days with r_t > 0 among days with r_t != 0; None if the value never moved."""
    moved = returns != 0.0
    if not np.any(moved):
        return None
    return float(np.count_nonzero(returns > 0) / np.count_nonzero(moved))


def curve_metrics(
    values: Sequence[float] | np.ndarray,
    closes: Sequence[float] | np.ndarray,
    positions: Sequence[float] | np.ndarray,
    traded: Sequence[float] | np.ndarray,
    total_reward: float | None = None,
) -> dict[str, float | int | None]:
    """Every metric of ``METRIC_NAMES`` for one episode.

    ``values`` has T + 1 entries (V_0 first); ``closes``, ``positions`` (shares held after
    each day's trade) and ``traded`` (signed shares traded each day) have T entries.
    """
    curve = validate_curve(values)
    days = len(curve) - 1
    closes = np.asarray(closes, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    traded = np.asarray(traded, dtype=np.float64)
    if not len(closes) == len(positions) == len(traded) == days:
        raise MetricsError(
            f"closes, positions and traded need one entry per day ({days}); "
            f"got {len(closes)}, {len(positions)}, {len(traded)}"
        )
    returns = curve[1:] / curve[:-1] - 1.0
    mdd = float(((np.maximum.accumulate(curve) - curve) / np.maximum.accumulate(curve)).max())
    arr = annualised_return(curve)
    sharpe = sharpe_daily(returns)
    return {
        "total_reward": None if total_reward is None else float(total_reward),
        "final_value": float(curve[-1]),
        "total_return": float(curve[-1] / curve[0] - 1.0),
        "arr": _finite_or_none(arr),
        "sharpe": sharpe,
        "sharpe_annual": None if sharpe is None else sharpe * math.sqrt(TRADING_DAYS_PER_YEAR),
        "sortino": sortino_daily(returns),
        "volatility": annual_volatility(returns),
        "mdd": mdd,
        "calmar": _finite_or_none(arr / mdd) if mdd > 0 else None,
        "win_rate": win_rate(returns),
        "trades": int(np.count_nonzero(traded)),
        "turnover": float(np.abs(traded * closes).sum() / curve[0]),
        "exposure": float(np.mean(positions * closes / curve[1:])),
    }


def format_metric(value: object, digits: int = 4) -> str:
    """A table cell: "–" for None/NaN, integers as is, floats to ``digits`` significant digits
    (large ones as whole numbers with thousands separators)."""
    if value is None:
        return "–"
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return "–"
    if abs(number) >= 10**digits:
        return f"{number:,.0f}"
    return f"{number:.{digits}g}"
