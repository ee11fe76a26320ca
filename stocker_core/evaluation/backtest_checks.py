"""Invariants every stored backtest must keep (pure functions over ``eval.*`` rows).

- The hindsight ideal ends at least as high as every policy on the same episode.
- Every equity curve starts (step 0) at the episode's starting cash.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from stocker_core.env.policies import is_upper_bound

RELATIVE_TOLERANCE = 1e-9


def ideal_shortfalls(backtests: pd.DataFrame) -> dict[str, list[str]]:
    """{episode key: policies whose final value beats the hindsight ideal's}; keys without an
    ideal row are listed with the problem ``no ideal row``."""
    problems: dict[str, list[str]] = {}
    if backtests.empty:
        return problems
    for key, part in backtests.groupby("key", sort=True):
        ideal = part[[is_upper_bound(str(p)) for p in part["policy"]]]
        if ideal.empty:
            problems[str(key)] = ["no ideal row"]
            continue
        best = float(ideal["final_value"].max())
        limit = best + RELATIVE_TOLERANCE * max(1.0, abs(best))
        others = part[[not is_upper_bound(str(p)) for p in part["policy"]]]
        above = others[others["final_value"].astype(float) > limit]
        if len(above):
            problems[str(key)] = [
                f"{p} ends at {v:,.2f} > ideal {best:,.2f}"
                for p, v in zip(above["policy"], above["final_value"], strict=True)
            ]
    return problems


def start_cash_mismatches(
    first_steps: pd.DataFrame, starting_cash: Mapping[str, float], default_cash: float
) -> dict[str, list[str]]:
    """{episode key: policies whose step-0 value is not the episode's starting cash}.

    ``first_steps`` holds the ``eval.equity_curves`` rows with ``step == 0`` (key, policy,
    value); ``starting_cash`` maps an episode key to its cash (others use ``default_cash``).
    A policy of a stored backtest with no step-0 row is a mismatch too.
    """
    problems: dict[str, list[str]] = {}
    for row in first_steps.itertuples(index=False):
        cash = float(starting_cash.get(row.key, default_cash))
        value = float(row.value)
        if abs(value - cash) > RELATIVE_TOLERANCE * max(1.0, abs(cash)):
            problems.setdefault(str(row.key), []).append(
                f"{row.policy} starts at {value:,.2f}, not {cash:,.2f}"
            )
    return problems


def missing_first_steps(backtests: pd.DataFrame, first_steps: pd.DataFrame) -> dict[str, list[str]]:
    """{episode key: policies with a backtest row but no step-0 equity row}."""
    have = set(zip(first_steps.get("key", []), first_steps.get("policy", []), strict=True))
    problems: dict[str, list[str]] = {}
    for key, policy in zip(backtests.get("key", []), backtests.get("policy", []), strict=True):
        if (key, policy) not in have:
            problems.setdefault(str(key), []).append(f"{policy} has no equity curve")
    return problems
