"""The trading environment: composes the episode, portfolio accounting, reward and ideal path."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from stocker_core.config import Settings
from stocker_core.env.actions import SIDE_NAMES, Action, Side, parse_action
from stocker_core.env.episode import Episode
from stocker_core.env.ideal import ideal_trajectory
from stocker_core.env.observation_schema import Observation
from stocker_core.env.portfolio import Portfolio, buy_and_hold_final
from stocker_core.env.rewards import (
    FinalStats,
    RewardBreakdown,
    RewardParams,
    lookahead_term,
    step_reward,
)
from stocker_core.errors import StockerError


class EpisodeDoneError(StockerError, RuntimeError):
    """``step`` was called after the episode ended."""


class SnapshotError(StockerError, ValueError):
    """A snapshot that does not fit this environment."""


_PLAY_STATE = ("portfolio", "t", "done", "actions", "rewards", "breakdowns", "invalid_count")
"""The attributes a play changes: kept before a snapshot's replay, put back if it fails."""


@dataclass(frozen=True)
class StepResult:
    observation: Observation
    reward: float
    done: bool
    info: dict[str, Any]


class TradingEnv:
    """One ticker over one window of trading days: the SPEC §1 trading environment.

    The core environment keeps the spec's ``reset / step / state / snapshot /
    restore`` shape; ``stocker_core.env.gym_env.StockerGymEnv`` adapts it to
    Gymnasium. The council and any other policy run *outside* ``step()``.

    **Action** — ``Action(side, quantity)`` (or the dict / JSON string
    ``{"side": "buy" | "sell" | "hold", "quantity": int >= 0}``), filled at the
    close of the current trading day. Buys cost ``quantity * close * (1 + c)``,
    sells return ``quantity * close * (1 - c)``, ``c = params.transaction_cost``.
    A buy beyond cash or a sell beyond the position is *invalid*: not executed,
    and ``params.invalid_penalty`` is taken off that step's reward.

    **Observation** (``Observation``, returned by ``reset`` and in each ``StepResult``):

    ==================  =====================================================  ===============
    field               meaning                                                bounds
    ==================  =====================================================  ===============
    ``ticker``          the episode's symbol                                   –
    ``date``            the decision day, ISO ``YYYY-MM-DD``                   window days
    ``close``           that day's close                                       > 0
    ``step``            index of the decision day in the window                0 … T (T when done)
    ``total_steps``     T, the window's trading days                           ≥ 1
    ``cash``            cash after the previous fills                          ≥ 0
    ``position``        whole shares held                                      ≥ 0
    ``portfolio_value`` cash + position × close                                ≥ 0
    ``done``            the episode is over                                    bool
    ``price_history``   closes up to and including ``date`` (history first)   > 0, never later
    ==================  =====================================================  ===============

    **Reward** — ``stocker_core.env.rewards.step_reward`` (SPEC §1, the one home
    of the formula): ``W_PERF·perf + W_INFL·infl_factor − invalid_penalty``
    (+ optional lookahead term), plus on the last step the alpha bonus vs
    buy-and-hold minus the drawdown penalty; clipped to [−1, 1]. ``StepResult.info``
    carries every term in ``info["breakdown"]``.

    **Episode end** — ``done`` after the action of the last trading day (T steps;
    no truncation). Stepping again raises ``EpisodeDoneError``; ``reset()`` or
    ``restore(snapshot)`` starts over.

    **Arguments** — ``episode``: an ``Episode`` (``load_episode("AAPL|2023-08-01")``,
    a task alias, or ``episode_from_closes`` for synthetic data); ``params``:
    ``RewardParams`` or ``Settings`` (default: the Settings defaults with the
    episode's starting cash).

    Example:

    >>> from stocker_core.env import Action, TradingEnv, episode_from_closes
    >>> env = TradingEnv(episode_from_closes([100.0, 110.0, 121.0]))
    >>> obs = env.reset()
    >>> (obs.step, obs.total_steps, obs.cash, obs.position)
    (0, 3, 10000.0, 0)
    >>> result = env.step(Action.buy(50))
    >>> (result.observation.position, round(result.observation.cash, 2), result.done)
    (50, 4995.0, False)
    >>> result = env.step({"side": "sell", "quantity": 99})  # more than held: invalid
    >>> result.info["invalid"], result.info["breakdown"]["invalid_penalty"]
    (True, 0.01)
    >>> env.step(Action.hold()).done
    True
    """

    def __init__(self, episode: Episode, params: RewardParams | Settings | None = None) -> None:
        if isinstance(params, Settings):
            params = RewardParams.from_settings(params)
        params = params or RewardParams(starting_cash=episode.starting_cash)
        self.episode = episode
        self.params = params
        self.closes = episode.closes
        self._closes_list = [float(x) for x in episode.closes]
        self._all_closes = episode.all_closes
        self._offset = len(episode.all_closes) - episode.trading_days
        self._dates = [d.date().isoformat() for d in episode.dates]
        self.ideal = ideal_trajectory(self.closes, params.transaction_cost, params.starting_cash)
        self._ideal_pnl = [float(x) for x in self.ideal.pnl]
        self.ideal_total = self.ideal.total
        self.buy_and_hold_final = buy_and_hold_final(
            self._closes_list, params.starting_cash, params.transaction_cost
        )
        self.reset()

    @property
    def total_steps(self) -> int:
        return len(self._closes_list)

    def reset(self) -> Observation:
        """Start the episode over: start cash, no position, step 0."""
        self.portfolio = Portfolio.start(self.params.starting_cash)
        self.t = 0
        self.done = False
        self.actions: list[tuple[int, int]] = []
        self.rewards: list[float] = []
        self.breakdowns: list[RewardBreakdown] = []
        self.invalid_count = 0
        return self.observation()

    def observation(self) -> Observation:
        """The current observation (the last day's when done)."""
        i = min(self.t, self.total_steps - 1)
        price = self._closes_list[i]
        return Observation(
            ticker=self.episode.ticker,
            date=self._dates[i],
            close=price,
            step=self.t,
            total_steps=self.total_steps,
            cash=self.portfolio.cash,
            position=self.portfolio.position,
            portfolio_value=self.portfolio.value(price),
            done=self.done,
            price_history=self._all_closes[: self._offset + i + 1],
        )

    def _lookahead(self, traded: int, price: float) -> float:
        k, weight = self.params.lookahead_k, self.params.lookahead_weight
        if k <= 0 or weight == 0.0 or traded == 0:
            return 0.0
        ahead = self._closes_list[min(self.t + k, self.total_steps - 1)]
        exposure = traded * price / self.params.starting_cash
        return lookahead_term(exposure, ahead / price - 1.0, weight)

    def step(self, action: Action | dict[str, Any] | str) -> StepResult:
        """Apply ``action`` at today's close; return the next observation and the reward."""
        if self.done:
            raise EpisodeDoneError(
                "the episode is over; call reset (or restore a snapshot) before stepping again"
            )
        act = parse_action(action)
        side = int(act.code)
        t, price = self.t, self._closes_list[self.t]
        fill = self.portfolio.apply(side, act.quantity, price, self.params.transaction_cost)
        value = self.portfolio.value(price)
        last = t == self.total_steps - 1
        final = FinalStats(value, self.buy_and_hold_final, self.portfolio.max_drawdown) if last else None
        breakdown = step_reward(
            value,
            t,
            self._ideal_pnl[t],
            self.ideal_total,
            fill.invalid,
            self.params,
            lookahead=self._lookahead(fill.traded, price),
            final=final,
        )
        self.actions.append((side, act.quantity))
        self.rewards.append(breakdown.reward)
        self.breakdowns.append(breakdown)
        self.invalid_count += int(fill.invalid)
        self.t += 1
        self.done = last
        info = {
            "invalid": fill.invalid,
            "traded": fill.traded,
            "breakdown": breakdown.as_dict(),
            "date": self._dates[t],
            "price": price,
            "portfolio_value": value,
        }
        return StepResult(self.observation(), breakdown.reward, self.done, info)

    def state(self) -> dict[str, Any]:
        """The observation plus the episode so far (JSON-ready)."""
        return {
            "episode_key": self.episode.key,
            "task_id": self.episode.task_id,
            "observation": self.observation().to_dict(),
            "total_reward": float(sum(self.rewards)),
            "rewards": list(self.rewards),
            "invalid_count": self.invalid_count,
            "max_drawdown": self.portfolio.max_drawdown,
            "ideal_total": self.ideal_total,
            "buy_and_hold_final": self.buy_and_hold_final,
            "done": self.done,
        }

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to resume from this exact state (JSON-ready)."""
        return {
            "episode_key": self.episode.key,
            "step": self.t,
            "cash": self.portfolio.cash,
            "position": self.portfolio.position,
            "peak": self.portfolio.peak,
            "max_drawdown": self.portfolio.max_drawdown,
            "actions": [list(a) for a in self.actions],
            "rewards": list(self.rewards),
            "breakdowns": [b.as_dict() for b in self.breakdowns],
            "invalid_count": self.invalid_count,
            "done": self.done,
        }

    def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Resume from a ``snapshot()`` of the same episode.

        A snapshot is checked against the episode itself: its actions are replayed from the
        start, and its cash, position, peak, drawdown, rewards, reward terms, invalid count
        and end flag must be what that replay gives (so every value is finite, cash and
        position are never negative, the step is in range, values fit the episode's prices
        and no reward is forged). Anything else is a SnapshotError and the state is unchanged."""
        try:
            if snapshot["episode_key"] != self.episode.key:
                raise SnapshotError(
                    f"snapshot is of episode {snapshot['episode_key']!r}, "
                    f"this environment plays {self.episode.key!r}; reset to that episode first"
                )
            step = _whole(snapshot["step"], "step")
            if not 0 <= step <= self.total_steps:
                raise SnapshotError(f"snapshot step {step} outside 0..{self.total_steps}")
            actions = [
                Action(side=SIDE_NAMES[Side(_whole(s, "side"))], quantity=q) for s, q in snapshot["actions"]
            ]
            claimed = {
                "cash": _finite(snapshot["cash"], "cash"),
                "position": _whole(snapshot["position"], "position"),
                "peak": _finite(snapshot["peak"], "peak"),
                "max_drawdown": _finite(snapshot["max_drawdown"], "max_drawdown"),
                "rewards": [_finite(r, "reward") for r in snapshot["rewards"]],
                "breakdowns": [
                    {k: _finite(v, f"breakdown {k}") for k, v in RewardBreakdown(**b).as_dict().items()}
                    for b in snapshot["breakdowns"]
                ],
                "invalid_count": _whole(snapshot["invalid_count"], "invalid_count"),
                "done": snapshot.get("done", step == self.total_steps),
            }
            if not len(actions) == len(claimed["rewards"]) == len(claimed["breakdowns"]) == step:
                raise SnapshotError("snapshot actions/rewards/breakdowns must have one entry per step")
        except SnapshotError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SnapshotError(f"malformed snapshot: {exc!r}; pass what snapshot() returned") from None
        saved = {name: getattr(self, name) for name in _PLAY_STATE}
        self.reset()
        for action in actions:
            self.step(action)
        replayed = {
            "cash": self.portfolio.cash,
            "position": self.portfolio.position,
            "peak": self.portfolio.peak,
            "max_drawdown": self.portfolio.max_drawdown,
            "rewards": list(self.rewards),
            "breakdowns": [b.as_dict() for b in self.breakdowns],
            "invalid_count": self.invalid_count,
            "done": self.done,
        }
        wrong = [name for name in claimed if not _same(claimed[name], replayed[name])]
        if wrong:
            for name, value in saved.items():
                setattr(self, name, value)
            raise SnapshotError(
                f"snapshot {', '.join(wrong)}: not what a replay of its {step} action(s) on "
                f"{self.episode.key} gives; send what GET /snapshot returned, unchanged"
            )
        return self.observation()

    def trajectory(self) -> dict[str, Any]:
        """The episode so far as a saved trajectory (what ``stocker grade`` reads)."""
        price = self._closes_list[min(self.t, self.total_steps) - 1] if self.t else self._closes_list[0]
        return {
            "episode_key": self.episode.key,
            "task_id": self.episode.task_id,
            "ticker": self.episode.ticker,
            "dates": self._dates[: self.t],
            "prices": self._closes_list[: self.t],
            "all_prices": self._closes_list,
            "params": asdict(self.params),
            "actions": [{"side": SIDE_NAMES[Side(s)], "quantity": q} for s, q in self.actions],
            "rewards": list(self.rewards),
            "breakdowns": [b.as_dict() for b in self.breakdowns],
            "total_reward": float(sum(self.rewards)),
            "final_value": self.portfolio.value(price),
            "buy_and_hold_final": self.buy_and_hold_final,
            "ideal_total": self.ideal_total,
            "done": self.done,
        }


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SnapshotError(f"snapshot {name} must be a finite number, got {value!r}")
    return float(value)


def _whole(value: Any, name: str) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not value.is_integer())  # NaN and inf included
    ):
        raise SnapshotError(f"snapshot {name} must be a whole number, got {value!r}")
    return int(value)


def _same(claimed: Any, replayed: Any) -> bool:
    """Equal up to float rounding (JSON keeps floats exact; the tolerance is for other encoders)."""
    if isinstance(claimed, list):
        return len(claimed) == len(replayed) and all(
            _same(c, r) for c, r in zip(claimed, replayed, strict=True)
        )
    if isinstance(claimed, dict):
        return claimed.keys() == replayed.keys() and all(_same(claimed[k], replayed[k]) for k in claimed)
    if isinstance(claimed, bool) or isinstance(replayed, bool):
        return claimed is replayed
    return math.isclose(claimed, replayed, rel_tol=1e-9, abs_tol=1e-9)
