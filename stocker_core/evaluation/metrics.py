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
    """Every metric of ``METRIC_NAMES`` for one episode (``curve_metrics_many`` of one row).

    ``values`` has T + 1 entries (V_0 first); ``closes``, ``positions`` (shares held after
    each day's trade) and ``traded`` (signed shares traded each day) have T entries.
    """
    curve = validate_curve(values)
    days = len(curve) - 1
    rows = [np.asarray(a, dtype=np.float64) for a in (closes, positions, traded)]
    if any(a.ndim != 1 or len(a) != days for a in rows):
        raise MetricsError(
            f"closes, positions and traded need one entry per day ({days}); "
            f"got {len(rows[0])}, {len(rows[1])}, {len(rows[2])}"
        )
    return curve_metrics_many(curve[None, :], *(a[None, :] for a in rows), [total_reward])[0]


def curve_metrics_many(
    values: np.ndarray,
    closes: np.ndarray,
    positions: np.ndarray,
    traded: np.ndarray,
    total_rewards: Sequence[float | None] | np.ndarray,
) -> list[dict[str, float | int | None]]:
    """``curve_metrics`` of many episodes of one length at once: ``values`` is (R, T + 1),
    the others (R, T); one array pass per metric (empyrical on the returns as T × R columns,
    the same sums in the same order as one curve at a time)."""
    import empyrical

    curve = np.ascontiguousarray(values, dtype=np.float64)
    if curve.ndim != 2 or curve.shape[1] < 2:
        raise MetricsError("an equity curve needs V_0 and at least one day's close value")
    if not np.all(np.isfinite(curve)) or np.any(curve <= 0):
        raise MetricsError("equity curve values must be positive finite numbers")
    closes, positions, traded = (np.asarray(a, dtype=np.float64) for a in (closes, positions, traded))
    days = curve.shape[1] - 1
    returns = curve[:, 1:] / curve[:, :-1] - 1.0
    columns = np.ascontiguousarray(returns.T)
    peak = np.maximum.accumulate(curve, axis=1)
    mdd = ((peak - curve) / peak).max(axis=1)
    # empyrical.annual_return: the product along each contiguous row, then a scalar power
    # (numpy's array power may take another code path and differ in the last bit)
    power = 1 / (days / TRADING_DAYS_PER_YEAR)
    arr = np.array([ending**power - 1 for ending in np.prod(returns + 1, axis=1).tolist()])
    two = days >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        sharpe = empyrical.sharpe_ratio(columns, annualization=1) if two else np.full(len(curve), np.nan)
        sortino = empyrical.sortino_ratio(columns, annualization=1) if two else np.full(len(curve), np.nan)
    vol = (
        empyrical.annual_volatility(columns, annualization=TRADING_DAYS_PER_YEAR)
        if two
        else np.full(len(curve), np.nan)
    )
    spread = np.std(returns, axis=1) != 0.0
    losing = np.any(returns < 0, axis=1)
    moved = np.count_nonzero(returns != 0.0, axis=1)
    rose = np.count_nonzero(returns > 0, axis=1)
    trades = np.count_nonzero(traded, axis=1)
    turnover = np.abs(traded * closes).sum(axis=1) / curve[:, 0]
    exposure = np.mean(positions * closes / curve[:, 1:], axis=1)
    out = []
    for i in range(len(curve)):
        sharpe_i = _finite_or_none(sharpe[i]) if two and spread[i] else None
        reward = total_rewards[i]
        out.append(
            {
                "total_reward": None if reward is None else float(reward),
                "final_value": float(curve[i, -1]),
                "total_return": float(curve[i, -1] / curve[i, 0] - 1.0),
                "arr": _finite_or_none(arr[i]),
                "sharpe": sharpe_i,
                "sharpe_annual": None if sharpe_i is None else sharpe_i * math.sqrt(TRADING_DAYS_PER_YEAR),
                "sortino": _finite_or_none(sortino[i]) if two and losing[i] else None,
                "volatility": _finite_or_none(vol[i]) if two else None,
                "mdd": float(mdd[i]),
                "calmar": _finite_or_none(arr[i] / mdd[i]) if mdd[i] > 0 else None,
                "win_rate": float(rose[i] / moved[i]) if moved[i] else None,
                "trades": int(trades[i]),
                "turnover": float(turnover[i]),
                "exposure": float(exposure[i]),
            }
        )
    return out


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
