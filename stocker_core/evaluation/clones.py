"""Policies that behave exactly like another: found from their results, named in the report.

A trained model that learned to buy and hold (a2c, moderator_grpo) earns buy_and_hold's
numbers on every window; listing it as a separate result, or drawing its curve under the
baseline's, misleads. ``identical_to`` finds them so the report can say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from stocker_core.env.policies import is_upper_bound


def identical_to(
    frame: pd.DataFrame,
    by: Sequence[str],
    values: Sequence[str],
    order: Sequence[str] | None = None,
    rtol: float = 1e-12,
) -> dict[str, str]:
    """``{policy: earlier policy}`` for each policy whose ``values`` equal an earlier
    policy's (in ``order``, else first appearance) in every ``by`` group, with the same
    groups on both sides. Hindsight upper bounds are never matched."""
    if frame.empty:
        return {}
    policies = [p for p in (order or list(dict.fromkeys(frame["policy"]))) if not is_upper_bound(str(p))]
    table = {
        policy: part.set_index(list(by))[list(values)].sort_index().astype(float)
        for policy, part in frame.groupby("policy", sort=False)
        if policy in policies
    }
    found: dict[str, str] = {}
    for i, policy in enumerate(policies):
        mine = table.get(policy)
        if mine is None or mine.empty:
            continue
        for earlier in policies[:i]:
            theirs = table.get(earlier)
            if earlier in found or theirs is None or not mine.index.equals(theirs.index):
                continue
            if np.allclose(mine.to_numpy(), theirs.to_numpy(), rtol=rtol, atol=0.0, equal_nan=True):
                found[policy] = earlier
                break
    return found


WINDOW_VALUES = ("final_value", "total_reward")
"""What a clone matches on every rolling window: the account's end and the reward earned."""


def window_clones(rolling: pd.DataFrame) -> dict[str, str]:
    """``{policy: original}`` over ``eval.rolling`` rows: policies whose final value and total
    reward equal an earlier policy's (table order: baselines first) on every window."""
    values = [c for c in WINDOW_VALUES if c in rolling.columns]
    if rolling.empty or not values:
        return {}
    from stocker_core.evaluation.backtests import ordered_policies

    order = ordered_policies([str(p) for p in dict.fromkeys(rolling["policy"])])
    return identical_to(rolling, ["ticker", "window_index"], values, order)


def clone_label(policy: str, original: str) -> str:
    """How a table names a clone: ``a2c = buy_and_hold``."""
    return f"{policy} = {original}"


def _by_original(clones: dict[str, str]) -> dict[str, list[str]]:
    by_original: dict[str, list[str]] = {}
    for clone, original in clones.items():
        by_original.setdefault(original, []).append(clone)
    return by_original


def clone_summary(clones: dict[str, str]) -> str:
    """``a2c = buy_and_hold; ppo, oracle = hold`` (one part per original, in first-seen order)."""
    return "; ".join(f"{', '.join(c)} = {o}" for o, c in _by_original(clones).items())


def clone_lines(clones: dict[str, str], where: str) -> list[str]:
    """``a2c, moderator_grpo: identical to buy_and_hold on every window`` per original."""
    return [f"{', '.join(c)}: identical to {o} {where}" for o, c in _by_original(clones).items()]
