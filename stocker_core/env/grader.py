"""Replay grader: re-grade saved (actions, prices) under any reward settings, vectorized.

Rows are independent (trajectory, settings) pairs: the accounting is one loop
over steps on numpy vectors of all rows at once, the reward is computed for
every row and step in one go. Results equal ``TradingEnv`` step by step.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stocker_core.config import setting_problem
from stocker_core.env.actions import SIDE_CODES, Side, parse_action
from stocker_core.env.ideal import SCALAR_ROWS, ideal_paths
from stocker_core.env.portfolio import apply_trade, buy_and_hold_final
from stocker_core.env.rewards import (
    RewardParams,
    RewardParamsError,
    final_bonuses,
    lookahead_terms,
    step_rewards,
)
from stocker_core.errors import StockerError


class GradeError(StockerError, ValueError):
    """A trajectory or settings grid that cannot be graded."""


ParamColumns = dict[str, np.ndarray]
"""One array per RewardParams field, one entry per row."""


@dataclass(frozen=True)
class GradeResult:
    """Per-row, per-step results of a re-grade; arrays are (rows, steps) or (rows,)."""

    columns: ParamColumns
    rewards: np.ndarray
    values: np.ndarray
    invalid: np.ndarray
    perf: np.ndarray
    infl_factor: np.ndarray
    lookahead: np.ndarray
    alpha_bonus: np.ndarray
    dd_penalty: np.ndarray
    max_drawdown: np.ndarray
    complete: bool

    @property
    def params(self) -> list[RewardParams]:
        """The settings of each row."""
        names = RewardParams.field_names()
        kinds = {n: type(getattr(RewardParams(), n)) for n in names}
        return [
            RewardParams(**{n: kinds[n](self.columns[n][i]) for n in names}) for i in range(len(self.rewards))
        ]

    @property
    def total_reward(self) -> np.ndarray:
        return self.rewards.sum(axis=1)

    @property
    def final_value(self) -> np.ndarray:
        return self.values[:, -1]

    def table(self) -> list[dict[str, Any]]:
        """One row per (trajectory, settings): the settings plus totals."""
        total, final, invalid = self.total_reward, self.final_value, self.invalid.sum(axis=1)
        return [
            {
                **asdict(p),
                "total_reward": float(total[i]),
                "final_value": float(final[i]),
                "invalid_steps": int(invalid[i]),
                "max_drawdown": float(self.max_drawdown[i]),
            }
            for i, p in enumerate(self.params)
        ]


def param_columns(
    params: RewardParams | Sequence[RewardParams] | ParamColumns, rows: int | None = None
) -> ParamColumns:
    """Settings as columns: from one RewardParams (repeated ``rows`` times), a list, or columns."""
    names = RewardParams.field_names()
    if isinstance(params, RewardParams):
        n = rows or 1
        return {k: np.full(n, float(getattr(params, k))) for k in names}
    if isinstance(params, Mapping):
        lengths = {len(np.atleast_1d(v)) for v in params.values()}
        if set(params) != set(names) or len(lengths) != 1:
            raise GradeError(f"settings columns need every field of {names}, all one length")
        return {k: np.asarray(params[k], dtype=np.float64).reshape(-1) for k in names}
    plist = list(params)
    return {k: np.array([getattr(p, k) for p in plist], dtype=np.float64) for k in names}


def _simulate_scalar(
    sides: np.ndarray,
    quantities: np.ndarray,
    prices: np.ndarray,
    cost: np.ndarray,
    starting_cash: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``simulate_accounts`` for a few rows, with the environment's own ``apply_trade`` on the
    closes as Python floats (``prices``: (rows, steps))."""
    rows, steps = sides.shape
    values = np.empty((rows, steps))
    invalid = np.zeros((rows, steps), dtype=bool)
    traded = np.zeros((rows, steps))
    for r in range(rows):
        cash, pos, c = float(starting_cash[r]), 0, float(cost[r])
        side_row, qty_row, px = sides[r].tolist(), quantities[r].tolist(), prices[r].tolist()
        vals, bad, done = [0.0] * steps, [False] * steps, [0] * steps
        for t in range(steps):
            fill = apply_trade(cash, pos, side_row[t], int(qty_row[t]), px[t], c)
            cash, pos = fill.cash, fill.position
            vals[t], bad[t], done[t] = cash + pos * px[t], fill.invalid, fill.traded
        values[r], invalid[r], traded[r] = vals, bad, done
    return values, invalid, traded


def simulate_accounts(
    sides: np.ndarray,
    quantities: np.ndarray,
    prices: np.ndarray,
    cost: np.ndarray,
    starting_cash: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, invalid, traded), each (rows, steps), for whole-share actions at the closes:
    ``prices`` is one series for every row (steps,) or one per row (rows, steps)."""
    rows, steps = sides.shape
    prices = np.broadcast_to(np.asarray(prices, dtype=np.float64), (rows, prices.shape[-1]))
    if rows <= SCALAR_ROWS:
        return _simulate_scalar(sides, quantities, prices, cost, starting_cash)
    cash = starting_cash.astype(np.float64).copy()
    pos = np.zeros(rows)
    values = np.empty((rows, steps))
    invalid = np.zeros((rows, steps), dtype=bool)
    traded = np.zeros((rows, steps))
    buy_factor = 1.0 + cost
    sell_factor = 1.0 - cost
    buys = sides == int(Side.BUY)
    sells = sides == int(Side.SELL)
    for t in range(steps):
        p = prices[:, t]
        q = quantities[:, t]
        gross = q * p
        outlay = gross * buy_factor
        active = q > 0
        is_buy = buys[:, t] & active
        is_sell = sells[:, t] & active
        bad_buy = is_buy & (outlay > cash)
        bad_sell = is_sell & (q > pos)
        ok_buy = is_buy & ~bad_buy
        ok_sell = is_sell & ~bad_sell
        cash = np.where(ok_buy, cash - outlay, np.where(ok_sell, cash + gross * sell_factor, cash))
        delta = np.where(ok_buy, q, np.where(ok_sell, -q, 0.0))
        pos = pos + delta
        values[:, t] = cash + pos * p
        invalid[:, t] = bad_buy | bad_sell
        traded[:, t] = delta
    return values, invalid, traded


def _one_episode(
    sides: np.ndarray, qty: np.ndarray, px: np.ndarray, cost: np.ndarray, cash0: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(ideal pnl, ideal total, buy-and-hold final, accounts) of rows on one episode's closes:
    what depends only on (cost, cash) is computed once per distinct pair."""
    n = len(px)
    uniq, inverse = np.unique(np.stack([cost, cash0], axis=1), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    _, _, ideal_values = ideal_paths(np.broadcast_to(px, (len(uniq), n)), uniq[:, 0], uniq[:, 1])
    ideal_pnl_u = ideal_values / uniq[:, 1:2] - 1.0
    closes_list = px.tolist()
    bh = np.array([buy_and_hold_final(closes_list, s, c) for c, s in uniq])[inverse]
    if sides.shape[0] == 1:
        u_values, u_invalid, u_traded = simulate_accounts(
            np.repeat(sides, len(uniq), 0), np.repeat(qty, len(uniq), 0), px, uniq[:, 0], uniq[:, 1]
        )
        accounts = (u_values[inverse], u_invalid[inverse], u_traded[inverse])
    else:
        accounts = simulate_accounts(sides, qty, px, cost, cash0)
    return ideal_pnl_u[inverse], ideal_pnl_u[inverse][:, -1:], bh, accounts


def _per_row_episodes(
    sides: np.ndarray, qty: np.ndarray, px: np.ndarray, cost: np.ndarray, cash0: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``_one_episode`` where row i trades on its own closes ``px[i]`` (many episodes of one
    length in one pass)."""
    _, _, ideal_values = ideal_paths(px, cost, cash0)
    ideal_pnl = ideal_values / cash0[:, None] - 1.0
    bh = np.array(
        [
            buy_and_hold_final(row, s, c)
            for row, c, s in zip(px.tolist(), cost.tolist(), cash0.tolist(), strict=True)
        ]
    )
    return ideal_pnl, ideal_pnl[:, -1:], bh, simulate_accounts(sides, qty, px, cost, cash0)


def grade_batch(
    sides: np.ndarray,
    quantities: np.ndarray,
    prices: Sequence[float] | np.ndarray,
    params: RewardParams | Sequence[RewardParams] | ParamColumns,
) -> GradeResult:
    """Re-grade trajectories on one episode's closes, or each on its own episode's.

    ``sides`` (codes 0 hold, 1 buy, 2 sell) and ``quantities`` are (rows, m) with
    m <= n steps taken; ``prices`` is one episode's n closes, or (rows, n): one episode of
    n days per row (many episodes of one length graded at once); ``params`` is one
    RewardParams for every row, one per row, or columns (see ``param_columns``). With one
    episode, a single trajectory row is graded under every settings row. The final-step
    bonus applies when m == n.
    """
    px = np.asarray(prices, dtype=np.float64)
    sides = np.atleast_2d(np.asarray(sides, dtype=np.int64))
    qty = np.atleast_2d(np.asarray(quantities, dtype=np.float64))
    n = px.shape[-1]
    if qty.shape != sides.shape or sides.shape[1] > n or sides.shape[1] == 0 or px.ndim > 2:
        raise GradeError(
            f"need (rows, m) sides and quantities with 1 <= m <= {n} prices; "
            f"got {sides.shape} and {qty.shape}"
        )
    col = param_columns(params, sides.shape[0])
    rows = len(col["w_perf"])
    steps = sides.shape[1]
    if sides.shape[0] not in (1, rows):
        raise GradeError(f"{rows} settings rows for {sides.shape[0]} trajectories")
    cost, cash0 = col["transaction_cost"], col["starting_cash"]
    if px.ndim == 2 and px.shape[0] != rows:
        raise GradeError(f"{px.shape[0]} price rows for {rows} settings rows")
    if px.ndim == 2:
        ideal_pnl, ideal_total, bh, (values, invalid, traded) = _per_row_episodes(sides, qty, px, cost, cash0)
        ahead = px
    else:
        ideal_pnl, ideal_total, bh, (values, invalid, traded) = _one_episode(sides, qty, px, cost, cash0)
        ahead = px[None, :]
    ideal_pnl = ideal_pnl[:, :steps]

    c = {k: v[:, None] for k, v in col.items()}
    k = c["lookahead_k"].astype(np.int64)
    weight = c["lookahead_weight"]
    if np.any((k > 0) & (weight != 0.0)):
        idx = np.minimum(np.arange(steps)[None, :] + np.maximum(k, 0), n - 1)
        today = ahead[:, :steps]
        fwd = np.take_along_axis(np.broadcast_to(ahead, (rows, n)), idx, axis=1) / today - 1.0
        exposure = traded * today / c["starting_cash"]
        lookahead = lookahead_terms(exposure, fwd, np.where(k > 0, weight, 0.0))
    else:
        lookahead = np.zeros((rows, steps))

    peak = np.maximum.accumulate(np.concatenate([cash0[:, None], values], axis=1), axis=1)[:, 1:]
    max_dd = np.max(np.where(peak > 0, (peak - values) / peak, 0.0), axis=1)
    complete = steps == n
    alpha = np.zeros((rows, steps))
    ddp = np.zeros((rows, steps))
    if complete:
        alpha[:, -1], ddp[:, -1] = final_bonuses(values[:, -1], bh, max_dd)
    terms = step_rewards(values, ideal_pnl, ideal_total, invalid, c, lookahead, alpha, ddp)
    return GradeResult(
        columns=col,
        rewards=terms.reward,
        values=values,
        invalid=invalid,
        perf=terms.perf,
        infl_factor=terms.infl_factor,
        lookahead=lookahead,
        alpha_bonus=alpha,
        dd_penalty=ddp,
        max_drawdown=max_dd,
        complete=complete,
    )


def encode_actions(actions: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(side codes, quantities) of actions given as dicts, Actions or ``[code, qty]`` pairs."""
    sides, qty = [], []
    for a in actions:
        if isinstance(a, list | tuple):
            sides.append(int(a[0]))
            qty.append(int(a[1]))
            continue
        try:
            act = parse_action(a)
        except ValueError as exc:
            raise GradeError(f"bad action {a!r} in trajectory: {exc}") from None
        sides.append(SIDE_CODES[act.side])
        qty.append(act.quantity)
    return np.array(sides, dtype=np.int64), np.array(qty, dtype=np.float64)


def trajectory_inputs(trajectory: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sides, quantities, episode closes) of a saved trajectory dict."""
    try:
        actions = trajectory["actions"]
        prices = trajectory.get("all_prices") or trajectory["prices"]
    except (KeyError, TypeError):
        raise GradeError(
            "a trajectory needs 'actions' and 'prices' (as written by `stocker episode run --out`)"
        ) from None
    sides, qty = encode_actions(actions)
    return sides, qty, np.asarray(prices, dtype=np.float64)


def trajectory_params(trajectory: Mapping[str, Any]) -> RewardParams:
    """The settings a trajectory was recorded with (defaults for those it lacks)."""
    stored = trajectory.get("params") or {}
    if not isinstance(stored, Mapping):
        raise GradeError("a trajectory's 'params' is a mapping of setting -> value")
    known = {k: v for k, v in stored.items() if k in RewardParams.field_names()}
    try:
        return RewardParams().replace(**known)
    except RewardParamsError as exc:
        raise GradeError(f"the trajectory's params: {exc}") from None


def grade_trajectory(
    trajectory: Mapping[str, Any],
    params: RewardParams | Sequence[RewardParams] | ParamColumns | None = None,
) -> GradeResult:
    """Re-grade one saved trajectory under its own settings, or each row of ``params``."""
    sides, qty, prices = trajectory_inputs(trajectory)
    return grade_batch(sides[None, :], qty[None, :], prices, params or trajectory_params(trajectory))


def load_trajectory(path: Path | str) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GradeError(f"cannot read trajectory {path}: {exc}") from None


def load_grid(path: Path | str) -> dict[str, list[Any]]:
    """A settings grid from YAML: keys are Settings field names, values lists."""
    import yaml

    try:
        grid = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise GradeError(f"cannot read grid {path}: {exc}") from None
    return validate_grid(grid)


def validate_grid(grid: Any) -> dict[str, list[Any]]:
    allowed = RewardParams.field_names()
    if not isinstance(grid, Mapping) or not grid:
        raise GradeError(f"a grid is a mapping of setting -> list of values; settings: {allowed}")
    out: dict[str, list[Any]] = {}
    for key, values in grid.items():
        if key not in allowed:
            raise GradeError(f"cannot sweep {key!r}: sweepable settings are {', '.join(allowed)}")
        values = values if isinstance(values, list) else [values]
        if not values:
            raise GradeError(f"grid entry {key!r} has no values")
        for value in values:
            if problem := setting_problem(key, value):
                raise GradeError(f"grid entry {key}: {value!r} ({problem})")
        out[key] = values
    return out


def grid_columns(grid: Mapping[str, Sequence[Any]], base: RewardParams | None = None) -> ParamColumns:
    """The cartesian product of a grid as settings columns (last key varies fastest)."""
    base = base or RewardParams()
    grid = validate_grid(dict(grid))
    try:
        axes = [np.asarray(grid[k], dtype=np.float64) for k in grid]
    except (TypeError, ValueError) as exc:
        raise GradeError(f"grid values must be numbers: {exc}") from None
    mesh = np.meshgrid(*axes, indexing="ij")
    count = mesh[0].size
    columns = param_columns(base, count)
    for key, values in zip(grid, mesh, strict=True):
        columns[key] = values.reshape(-1).copy()
    for key in ("lookahead_k",):
        if np.any(columns[key] != np.round(columns[key])):
            raise GradeError(f"{key} values must be whole numbers")
    return columns


def expand_grid(grid: Mapping[str, Sequence[Any]], base: RewardParams | None = None) -> list[RewardParams]:
    """The cartesian product of a grid, each combination applied over ``base``."""
    base = base or RewardParams()
    grid = validate_grid(dict(grid))
    keys = list(grid)
    caster = {k: type(getattr(base, k)) for k in keys}
    combos = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        try:
            changes = {k: caster[k](v) for k, v in zip(keys, combo, strict=True)}
        except (TypeError, ValueError) as exc:
            raise GradeError(f"bad grid value in {dict(zip(keys, combo, strict=True))}: {exc}") from None
        combos.append(base.replace(**changes))
    return combos


def sweep(
    trajectory: Mapping[str, Any], grid: Mapping[str, Sequence[Any]], base: RewardParams | None = None
) -> GradeResult:
    """Re-grade one trajectory under every combination of ``grid`` (over its own settings)."""
    return grade_trajectory(trajectory, grid_columns(grid, base or trajectory_params(trajectory)))
