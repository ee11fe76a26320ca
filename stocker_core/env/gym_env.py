"""A Gymnasium adapter over ``TradingEnv`` for deep-RL libraries (SB3 and the like)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.portfolio import max_affordable
from stocker_core.env.rewards import RewardParams

DEFAULT_FRACTIONS = (0.25, 0.5, 1.0)
FEATURE_BOUND = 1e3


class StockerGymEnv(gym.Env):
    """Gymnasium adapter over ``TradingEnv`` for deep-RL libraries (SB3 and the like).

    It adapts the core environment, it does not duplicate it: accounting, reward
    and episode end are ``TradingEnv``'s.

    **Action space** — ``Discrete(1 + 2·k)`` for ``k = len(fractions)``
    (default fractions 0.25, 0.5, 1.0 → ``Discrete(7)``):

    ======  =============================================================
    action  trade at today's close (whole shares, always feasible)
    ======  =============================================================
    0       hold
    1 … k   buy ``fractions[a-1]`` of the shares cash affords (after costs)
    k+1 …   sell ``fractions[a-1-k]`` of the position
    ======  =============================================================

    **Observation space** — ``Box(-1000, 1000, shape=(5 + window,), float32)``:

    =========  ====================================================  ==========
    index      meaning                                               bounds
    =========  ====================================================  ==========
    0          close / first close of the window − 1                 > −1
    1          cash / start cash                                     ≥ 0
    2          position value / start cash                           ≥ 0
    3          portfolio value / start cash − 1                      ≥ −1
    4          step / total steps                                    [0, 1]
    5 …        the last ``window`` daily log returns up to today,    clipped to
               oldest first, zero-padded on the left                 ±1000
    =========  ====================================================  ==========

    **Reward** — ``TradingEnv``'s per-step reward (``stocker_core.env.rewards``),
    in [−1, 1]. **Episode end** — ``terminated`` after the window's last trading
    day; ``truncated`` is always False. **Reset** — draws one of ``episodes``
    with the seeded ``np_random`` (or ``options={"episode_index": i}``);
    ``info["episode_key"]`` names it.

    **Arguments** — ``episodes``: one ``Episode`` or a sequence; ``params``:
    ``RewardParams`` (default: Settings defaults with each episode's cash);
    ``fractions``: the trade sizes; ``window``: how many past returns to show.

    Example:

    >>> from stocker_core.env import StockerGymEnv, episode_from_closes
    >>> env = StockerGymEnv(episode_from_closes([100.0, 101.0, 99.0, 103.0]), window=2)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space
    ((7,), Discrete(7))
    >>> obs, reward, terminated, truncated, info = env.step(3)  # buy all cash affords
    >>> bool(obs[2] > 0.98), terminated, truncated
    (True, False, False)
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        episodes: Episode | Sequence[Episode],
        params: RewardParams | None = None,
        fractions: Sequence[float] = DEFAULT_FRACTIONS,
        window: int = 10,
    ) -> None:
        super().__init__()
        self.episodes = [episodes] if isinstance(episodes, Episode) else list(episodes)
        if not self.episodes:
            raise ValueError("StockerGymEnv needs at least one episode")
        self.params = params
        self.fractions = tuple(float(f) for f in fractions)
        self.window = window
        self.action_space = spaces.Discrete(1 + 2 * len(self.fractions))
        self.observation_space = spaces.Box(
            low=-FEATURE_BOUND, high=FEATURE_BOUND, shape=(5 + window,), dtype=np.float32
        )
        self._envs: dict[int, TradingEnv] = {}
        self.env: TradingEnv | None = None

    def _core(self, index: int) -> TradingEnv:
        if index not in self._envs:
            episode = self.episodes[index]
            params = self.params or RewardParams(starting_cash=episode.starting_cash)
            self._envs[index] = TradingEnv(episode, params)
        return self._envs[index]

    def features(self, obs: Observation) -> np.ndarray:
        """The observation vector of a core observation."""
        assert self.env is not None
        start = self.env.params.starting_cash
        first = float(self.env.closes[0])
        hist = obs.price_history[-(self.window + 1) :]
        rets = np.diff(np.log(hist)) if len(hist) > 1 else np.zeros(0)
        padded = np.zeros(self.window)
        if len(rets):
            padded[-len(rets) :] = rets
        head = [
            obs.close / first - 1.0,
            obs.cash / start,
            obs.position * obs.close / start,
            obs.portfolio_value / start - 1.0,
            obs.step / obs.total_steps,
        ]
        features = np.concatenate([head, padded])
        return np.clip(features, -FEATURE_BOUND, FEATURE_BOUND).astype(np.float32)

    def to_action(self, action: int, obs: Observation) -> Action:
        """Translate a discrete action index into a feasible whole-share trade."""
        a = int(action)
        if not self.action_space.contains(a):
            raise ValueError(f"action {action!r} outside {self.action_space}")
        if a == 0:
            return Action.hold()
        k = len(self.fractions)
        assert self.env is not None
        if a <= k:
            top = max_affordable(obs.cash, obs.close, self.env.params.transaction_cost)
            return Action.buy(int(top * self.fractions[a - 1]))
        return Action.sell(int(obs.position * self.fractions[a - 1 - k]))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        index = int(options.get("episode_index", self.np_random.integers(len(self.episodes))))
        self.env = self._core(index)
        self._obs = self.env.reset()
        return self.features(self._obs), {"episode_key": self.env.episode.key}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.env is None:
            raise RuntimeError("call reset() before step()")
        result = self.env.step(self.to_action(action, self._obs))
        self._obs = result.observation
        return self.features(self._obs), float(result.reward), result.done, False, result.info
