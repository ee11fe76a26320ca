"""The per-step reward of SPEC §1 as pure functions of plain numbers."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields

from stocker_core.config import Settings

TRADING_DAYS_PER_YEAR = 252
MIN_SCALE = 0.05
MAX_ALPHA_BONUS = 0.10
MAX_DD_PENALTY = 0.10
DD_ALLOWANCE = 0.05


def _default(name: str):
    """The Settings default of ``name``: the one place reward defaults are written."""
    return Settings.model_fields[name].default


@dataclass(frozen=True)
class RewardParams:
    """Every number the reward and the accounting depend on: the reward subset of
    Settings as a frozen value that sweeps vary (defaults come from Settings)."""

    starting_cash: float = _default("starting_cash")
    transaction_cost: float = _default("transaction_cost")
    invalid_penalty: float = _default("invalid_penalty")
    w_perf: float = _default("w_perf")
    w_infl: float = _default("w_infl")
    annual_inflation: float = _default("annual_inflation")
    lookahead_k: int = _default("lookahead_k")
    lookahead_weight: float = _default("lookahead_weight")

    @classmethod
    def from_settings(cls, settings: Settings) -> RewardParams:
        return cls(**{f.name: getattr(settings, f.name) for f in fields(cls)})

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def replace(self, **changes: float) -> RewardParams:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class FinalStats:
    """What the final-step bonus needs: final value, buy-and-hold final value, max drawdown."""

    final_value: float
    buy_and_hold_final: float
    max_drawdown: float


@dataclass(frozen=True)
class RewardBreakdown:
    """Every term of one step's reward; ``reward`` is the clipped total."""

    nominal: float
    real: float
    infl_factor: float
    ideal: float
    gap: float
    scale: float
    perf: float
    invalid_penalty: float
    lookahead: float
    alpha_bonus: float
    dd_penalty: float
    raw: float
    reward: float

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def inflation_factor(nominal: float, step_index: int, annual_inflation: float) -> tuple[float, float]:
    """(real return, inflation factor = max(-1, real - nominal) <= 0) after ``step_index`` steps."""
    years = step_index / TRADING_DAYS_PER_YEAR
    infl = (1.0 + annual_inflation) ** years - 1.0
    real = (1.0 + nominal) / (1.0 + infl) - 1.0
    return real, max(-1.0, real - nominal)


def performance_factor(ideal: float, real: float, ideal_total: float) -> tuple[float, float, float]:
    """(perf, gap, scale): 1 + bonus when beating the ideal path, linear decay behind it."""
    gap = ideal - real
    scale = max(MIN_SCALE, 0.5 * abs(ideal_total))
    if gap < 0:
        perf = 1.0 + min(1.0, abs(gap) / scale)
    elif gap <= scale:
        perf = 1.0 - gap / scale
    else:
        perf = -min(1.0, (gap - scale) / scale)
    return perf, gap, scale


def final_bonus(final: FinalStats) -> tuple[float, float]:
    """(alpha bonus vs buy-and-hold, drawdown penalty) added on the final step."""
    alpha = min(MAX_ALPHA_BONUS, max(0.0, final.final_value / final.buy_and_hold_final - 1.0))
    dd = min(MAX_DD_PENALTY, max(0.0, final.max_drawdown - DD_ALLOWANCE))
    return alpha, dd


def lookahead_term(exposure_added: float, forward_return: float, weight: float) -> float:
    """``weight * exposure_added * sign(forward_return)``.

    ``exposure_added`` is the value of shares bought (negative when sold) as a
    fraction of start cash; ``forward_return`` is the close K steps ahead over
    today's close, minus 1. Weight 0 (or K = 0) disables the term.
    """
    if weight == 0.0 or forward_return == 0.0:
        return 0.0
    return weight * exposure_added * math.copysign(1.0, forward_return)


def clip(value: float, low: float = -1.0, high: float = 1.0) -> float:
    return min(high, max(low, value))


def step_reward(
    portfolio_value: float,
    step_index: int,
    ideal_pnl: float,
    ideal_total: float,
    invalid: bool,
    params: RewardParams,
    lookahead: float = 0.0,
    final: FinalStats | None = None,
) -> RewardBreakdown:
    """The reward of one step after the action was applied at that day's close (SPEC §1)."""
    nominal = (portfolio_value - params.starting_cash) / params.starting_cash
    real, infl_factor = inflation_factor(nominal, step_index, params.annual_inflation)
    perf, gap, scale = performance_factor(ideal_pnl, real, ideal_total)
    penalty = params.invalid_penalty if invalid else 0.0
    alpha, dd = final_bonus(final) if final is not None else (0.0, 0.0)
    raw = params.w_perf * perf + params.w_infl * infl_factor - penalty + lookahead + alpha - dd
    return RewardBreakdown(
        nominal=nominal,
        real=real,
        infl_factor=infl_factor,
        ideal=ideal_pnl,
        gap=gap,
        scale=scale,
        perf=perf,
        invalid_penalty=penalty,
        lookahead=lookahead,
        alpha_bonus=alpha,
        dd_penalty=dd,
        raw=raw,
        reward=clip(raw),
    )
