"""The per-step reward of SPEC §1: the one home of the formula.

Each term comes in two forms side by side: a scalar one on plain floats (the
environment, one step at a time) and a vectorised one on numpy arrays of
(rows, steps) (the replay grader, many trajectories and settings at once).
``tests/env/test_env_environment.py`` holds the two forms equal.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

from stocker_core.config import Settings, setting_problem
from stocker_core.errors import StockerError

TRADING_DAYS_PER_YEAR = 252
MIN_SCALE = 0.05
MAX_ALPHA_BONUS = 0.10
MAX_DD_PENALTY = 0.10
DD_ALLOWANCE = 0.05


def _default(name: str):
    """The Settings default of ``name``: the one place reward defaults are written."""
    return Settings.model_fields[name].default


class RewardParamsError(StockerError, ValueError):
    """A reward parameter out of the range its ``STOCKER_*`` setting allows (a negative cost,
    a non-finite weight, …): refused when the parameters are made, not as a crash mid-episode."""


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

    def __post_init__(self) -> None:
        problems = [
            f"{f.name}={getattr(self, f.name)!r} ({problem})"
            for f in fields(self)
            if (problem := setting_problem(f.name, getattr(self, f.name)))
        ]
        if problems:
            raise RewardParamsError("; ".join(problems))

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

    def contributions(self, w_perf: float, w_infl: float) -> dict[str, float]:
        """The signed parts of ``raw``, as they add up (penalties negative): what a person
        reading one step's reward needs; ``as_dict`` keeps the penalties' magnitudes."""
        return {
            "performance (w_perf × perf)": w_perf * self.perf,
            "inflation (w_infl × factor)": w_infl * self.infl_factor,
            "invalid-action penalty": 0.0 - self.invalid_penalty,
            "lookahead": self.lookahead,
            "alpha bonus (last step)": self.alpha_bonus,
            "drawdown penalty (last step)": 0.0 - self.dd_penalty,  # never -0.0
        }


def reward_terms(params: RewardParams) -> list[dict[str, object]]:
    """The reward as its terms (SPEC §1): ``reward = clip(Σ weight × breakdown[term], -1, 1)``,
    each with the ``RewardBreakdown`` field it reads and its weight (penalties weigh -1). The
    one description of the sum: ``/metadata`` serves it and the OpenEnv rubric is built from it."""
    return [
        {"name": "performance", "term": "perf", "weight": params.w_perf},
        {"name": "inflation", "term": "infl_factor", "weight": params.w_infl},
        {"name": "invalid_action", "term": "invalid_penalty", "weight": -1.0},
        {"name": "lookahead", "term": "lookahead", "weight": 1.0},
        {"name": "alpha_bonus", "term": "alpha_bonus", "weight": 1.0},
        {"name": "drawdown", "term": "dd_penalty", "weight": -1.0},
    ]


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


# Vectorised forms: arrays broadcast as (rows, steps); settings as (rows, 1) columns.


def inflation_factors(
    nominal: np.ndarray, step_index: np.ndarray, annual_inflation: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``inflation_factor`` on arrays: (real, infl_factor)."""
    infl = (1.0 + annual_inflation) ** (step_index / TRADING_DAYS_PER_YEAR) - 1.0
    real = (1.0 + nominal) / (1.0 + infl) - 1.0
    return real, np.maximum(-1.0, real - nominal)


def performance_factors(
    ideal: np.ndarray, real: np.ndarray, ideal_total: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``performance_factor`` on arrays: (perf, gap, scale)."""
    gap = ideal - real
    scale = np.maximum(MIN_SCALE, 0.5 * np.abs(ideal_total))
    perf = np.where(
        gap < 0,
        1.0 + np.minimum(1.0, np.abs(gap) / scale),
        np.where(gap <= scale, 1.0 - gap / scale, -np.minimum(1.0, (gap - scale) / scale)),
    )
    return perf, gap, scale


def final_bonuses(
    final_value: np.ndarray, buy_and_hold: np.ndarray, max_drawdown: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``final_bonus`` on arrays: (alpha bonus, drawdown penalty)."""
    alpha = np.minimum(MAX_ALPHA_BONUS, np.maximum(0.0, final_value / buy_and_hold - 1.0))
    dd = np.minimum(MAX_DD_PENALTY, np.maximum(0.0, max_drawdown - DD_ALLOWANCE))
    return alpha, dd


def lookahead_terms(exposure_added: np.ndarray, forward_return: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``lookahead_term`` on arrays (zero where nothing traded or the move is flat)."""
    on = (weight != 0.0) & (exposure_added != 0) & (forward_return != 0.0)
    return np.where(on, weight * exposure_added * np.sign(forward_return), 0.0)


@dataclass(frozen=True)
class RewardTerms:
    """Every term of many steps' rewards, each (rows, steps); ``reward`` is clipped."""

    perf: np.ndarray
    infl_factor: np.ndarray
    penalty: np.ndarray
    raw: np.ndarray
    reward: np.ndarray


def step_rewards(
    values: np.ndarray,
    ideal_pnl: np.ndarray,
    ideal_total: np.ndarray,
    invalid: np.ndarray,
    params: Mapping[str, np.ndarray],
    lookahead: np.ndarray | float = 0.0,
    alpha_bonus: np.ndarray | float = 0.0,
    dd_penalty: np.ndarray | float = 0.0,
) -> RewardTerms:
    """``step_reward`` for (rows, steps) portfolio values after steps 0..steps-1.

    ``params`` holds RewardParams fields as (rows, 1) columns; the final-step
    bonus terms are passed in as (rows, steps) arrays, zero except on the last step.
    """
    s0 = params["starting_cash"]
    nominal = (values - s0) / s0
    real, infl_factor = inflation_factors(
        nominal, np.arange(values.shape[1], dtype=np.float64), params["annual_inflation"]
    )
    perf, _, _ = performance_factors(ideal_pnl, real, ideal_total)
    penalty = np.where(invalid, params["invalid_penalty"], 0.0)
    raw = (
        params["w_perf"] * perf
        + params["w_infl"] * infl_factor
        - penalty
        + lookahead
        + alpha_bonus
        - dd_penalty
    )
    return RewardTerms(
        perf=perf, infl_factor=infl_factor, penalty=penalty, raw=raw, reward=np.clip(raw, -1.0, 1.0)
    )
