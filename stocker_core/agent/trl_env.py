"""``StockerToolEnv``: one trading decision as a TRL environment
(``GRPOTrainer(environment_factory=StockerToolEnv)``).

A rollout is one decision: ``reset(episode_key=, day=)`` (a row of
``stocker_core.agent.trl_dataset``) puts the episode at ``day`` and returns the decision
prompt, masked as the agent's and the council's are (the stock as a label, dates as
sessions, prices rebased) when ``Settings.llm_mask`` is on. The tools are the agent's seven
point-in-time tools (``AgentTools``: same names, arguments and docstrings, answers as JSON
seen through the mask, at most ``AgentConfig.max_tool_calls`` calls) plus ``trade(decision)``.
``get_reward()`` then plays the decision and scores it:

* the portfolio at ``day`` is **half invested**: half the starting cash bought whole shares
  at the episode's first close and held, so BUY (all in), SELL (sell the whole position) and
  HOLD (keep) are three different portfolios (the agent's ``decision_action``);
* ``reward="environment"`` (default): the SPEC §1 environment reward, the sum of the
  environment's step rewards over the decision's close and the ``horizon − 1`` sessions held
  after it; ``reward="excess"``: the training reward of SPEC §3 (``moderator.rewards``),
  ``(e_a − e_bh) · r_(t+H) − c · |e_a − e_t|``, the invested share after the decision
  against buy-and-hold's, times the return over the next ``horizon`` sessions, less costs;
* a rollout that never calls ``trade`` holds and loses the environment's invalid-action
  penalty (``Settings.invalid_penalty``).

The episode runs in process (``TradingEnv`` on the configured data) or, with
``server_url``, on a running ``stocker serve`` through the OpenEnv WebSocket client
(``StockerOpenEnv``, one connection per environment instance, kept across resets: the
server needs ``--max-sessions`` ≥ TRL's ``generation_batch_size``). The tools always run in
process on the same data (they read the warehouse or the source, point in time).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Protocol

import pandas as pd

from stocker_core.agent.config import AgentConfig, agent_config
from stocker_core.agent.errors import AgentError
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.tool_catalog import TOOL_NAMES
from stocker_core.agent.tools import AgentTools, result_text
from stocker_core.config import Settings, get_settings
from stocker_core.env.actions import Action
from stocker_core.env.portfolio import max_affordable

RewardMode = Literal["environment", "excess"]
REWARD_MODES: tuple[str, ...] = ("environment", "excess")
EPISODE_KEY = re.compile(r"^[A-Z0-9.^=\-]{1,15}\|\d{4}-\d{2}-01$")

__all__ = ["REWARD_MODES", "StockerToolEnv", "TrlEnvError"]


class TrlEnvError(AgentError):
    """A dataset row or setting the TRL environment cannot use."""


@dataclass(frozen=True)
class Point:
    """The episode at one step: what the decision and the rewards read."""

    step: int
    date: str
    close: float
    cash: float
    position: int
    total_steps: int
    done: bool = False


@dataclass(frozen=True)
class Costs:
    """The reward numbers the environment plays by."""

    starting_cash: float
    transaction_cost: float
    invalid_penalty: float


class EpisodeBackend(Protocol):
    """Where the episode runs: in process or on a server."""

    costs: Costs

    def reset(self, episode_key: str) -> Point: ...

    def step(self, action: Action) -> tuple[Point, float]: ...

    def close(self) -> None: ...


@lru_cache(maxsize=32)
def _template(episode_key: str, settings_json: str) -> Any:
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.episode import load_episode
    from stocker_core.env.rewards import RewardParams

    settings = Settings.model_validate_json(settings_json)
    return TradingEnv(load_episode(episode_key, settings), RewardParams.from_settings(settings))


class LocalBackend:
    """The episode as a ``TradingEnv`` in this process (loaded once per episode and copied)."""

    def __init__(self, settings: Settings) -> None:
        self.settings_json = settings.model_dump_json()
        self.costs = Costs(settings.starting_cash, settings.transaction_cost, settings.invalid_penalty)
        self.env: Any = None

    def reset(self, episode_key: str) -> Point:
        import copy

        from stocker_core.errors import StockerError

        try:
            self.env = copy.copy(_template(episode_key, self.settings_json))
        except StockerError as exc:
            raise TrlEnvError(f"cannot load episode {episode_key!r}: {exc}") from None
        return _point(self.env.reset())

    def step(self, action: Action) -> tuple[Point, float]:
        result = self.env.step(action)
        return _point(result.observation), float(result.reward)

    def close(self) -> None:
        self.env = None


def _point(observation: Any) -> Point:
    return Point(
        int(observation.step),
        str(observation.date),
        float(observation.close),
        float(observation.cash),
        int(observation.position),
        int(observation.total_steps),
        bool(observation.done),
    )


class ServerBackend:
    """The episode on ``stocker serve`` over OpenEnv's WebSocket protocol (one connection,
    opened on the first reset and kept)."""

    def __init__(self, base_url: str, api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.client: Any = None
        self.costs = self._costs()

    def _costs(self) -> Costs:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = httpx.get(f"{self.base_url}/metadata", headers=headers, timeout=30)
            response.raise_for_status()
            params = response.json()["reward_params"]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise TrlEnvError(
                f"cannot read {self.base_url}/metadata: {exc}; is `stocker serve` running?"
            ) from None
        return Costs(params["starting_cash"], params["transaction_cost"], params["invalid_penalty"])

    def reset(self, episode_key: str) -> Point:
        from stocker_core.env.openenv_client import StockerOpenEnv

        if self.client is None:
            self.client = StockerOpenEnv(base_url=self.base_url, api_key=self.api_key).sync()
            self.client.connect()
        try:
            return _point(self.client.reset(episode=episode_key).observation)
        except RuntimeError as exc:
            raise TrlEnvError(f"the server refused episode {episode_key!r}: {exc}") from None

    def step(self, action: Action) -> tuple[Point, float]:
        result = self.client.step(action)
        return _point(result.observation), float(result.reward)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


def decision_prompt(ticker: str, day: pd.Timestamp, mask: Any, horizon: int, max_calls: int) -> str:
    """The decision's task text (masked when ``mask`` is on), the same in training and in the
    ``agent_trl`` policy: it names no portfolio, so a decision depends on the stock and day only."""
    if mask is not None and mask.enabled:
        name = mask.name(ticker)
        where = (
            f"{name} at the close of session 0 (dates are sessions before it; prices are rebased to "
            "100 at the month's first session)"
        )
    else:
        name, where = ticker, f"{ticker} at the close of {day.date().isoformat()}"
    return (
        f"Decide BUY, SELL or HOLD for {where}. BUY invests the whole portfolio in {name}, SELL sells "
        f"the whole position, HOLD keeps it; the decision is scored over the next {horizon} sessions. "
        f"Call the tools you need one at a time (at most {max_calls}), then call trade with your decision."
    )


def masked_tool_answer(tools: AgentTools, mask: Any, name: str, arguments: Any) -> tuple[str, bool]:
    """(the tool's answer as JSON text seen through ``mask``, whether the call was valid)."""
    from stocker_core.text_events.masking import mask_json

    outcome = tools.call(name, arguments)
    result = mask_json(outcome.result, mask) if mask is not None else outcome.result
    return result_text(result), outcome.valid  # type: ignore[arg-type]


def _agent_tool(name: str) -> Any:
    """A method that runs the agent's tool ``name`` (its signature and docstring, so TRL
    derives the same JSON schema) and answers with its result as JSON text."""
    source = getattr(AgentTools, name)

    @functools.wraps(source)
    def tool(self: StockerToolEnv, **arguments: Any) -> str:
        return self._run_tool(name, arguments)

    tool.__annotations__ = {**source.__annotations__, "return": "str"}
    return tool


class StockerToolEnv:
    """One trading decision with the agent's tools (see the module docstring).

    Args:
        settings: Data, reward and masking settings (default: ``STOCKER_*``).
        server_url: Play episodes on this ``stocker serve`` (OpenEnv WebSocket) instead of
            in process.
        api_key: The server's API key (default ``$STOCKER_API_KEY``).
        reward: ``environment`` (SPEC §1 step rewards) or ``excess`` (SPEC §3 training reward).
        horizon: Sessions the decision is scored over (default: the agent's, 5).
        config: The agent's config (tool-call cap); default ``agent_config()``.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        server_url: str | None = None,
        api_key: str | None = None,
        reward: RewardMode = "environment",
        horizon: int | None = None,
        config: AgentConfig | None = None,
    ) -> None:
        if reward not in REWARD_MODES:
            raise TrlEnvError(f"unknown reward {reward!r}: use one of {', '.join(REWARD_MODES)}")
        self.settings = settings or get_settings()
        self.config = config or agent_config()
        self.reward_mode = reward
        self.horizon = horizon or self.config.horizon
        if self.horizon < 1:
            raise TrlEnvError("horizon must be at least 1 session")
        if server_url:
            import os

            key = api_key if api_key is not None else os.environ.get("STOCKER_API_KEY") or None
            self._backend: EpisodeBackend = ServerBackend(server_url, key)
        else:
            self._backend = LocalBackend(self.settings)
        self._tools: AgentTools | None = None
        self._mask: Any = None
        self._point: Point | None = None
        self._closes: list[float] = []
        self._key = ""
        self.decision: str | None = None
        self.tool_calls = 0
        self.invalid_tool_calls = 0
        self.rewards: dict[str, float] = {}

    # -- TRL's interface -------------------------------------------------------------
    def reset(self, episode_key: str = "", day: str = "", **row: Any) -> str:
        """Put the episode at ``day`` (half invested) and return the decision prompt."""
        from stocker_core.agent.masking import agent_mask
        from stocker_core.agent.policy import agent_data

        if not isinstance(episode_key, str) or not EPISODE_KEY.match(episode_key):
            raise TrlEnvError(f"episode_key must look like 'GOOGL|2016-03-01', got {episode_key!r}")
        try:
            when = pd.Timestamp(day).normalize()
        except (ValueError, TypeError):
            raise TrlEnvError(f"day must be a date YYYY-MM-DD, got {day!r}") from None
        ticker = episode_key.split("|", 1)[0]
        point = self._backend.reset(episode_key)
        closes = [point.close]
        if point.date == when.date().isoformat():
            raise TrlEnvError(f"{day} is the first session of {episode_key}: pick a later day of the episode")
        half = max_affordable(point.cash / 2.0, point.close, self._backend.costs.transaction_cost)
        action = Action.buy(half) if half > 0 else Action.hold()
        while point.date < when.date().isoformat() and not point.done:
            point, _ = self._backend.step(action)
            action = Action.hold()
            closes.append(point.close)
        if point.date != when.date().isoformat():
            raise TrlEnvError(f"{day} is not a trading day inside episode {episode_key}")
        if point.step + self.horizon > point.total_steps - 1:
            raise TrlEnvError(
                f"{day} leaves fewer than {self.horizon} sessions in {episode_key} to score the decision"
            )
        data = agent_data(ticker, self.settings)
        self._tools = AgentTools(data, when)
        self._mask = agent_mask(data, when) if self.settings.llm_mask else None
        self._point, self._closes, self._key = point, closes, episode_key
        self.decision, self.tool_calls, self.invalid_tool_calls, self.rewards = None, 0, 0, {}
        return decision_prompt(ticker, when, self._mask, self.horizon, self.config.max_tool_calls)

    def trade(self, decision: str) -> str:
        """Place the decision at the decision day's close; call it once, after the tools you need.

        Args:
            decision: BUY (invest the whole portfolio), SELL (sell the whole position) or HOLD (keep it).
        """
        if self._point is None:
            return json.dumps({"error": "no episode: reset first"})
        if self.decision is not None:
            return json.dumps({"error": f"the decision {self.decision} is already placed"})
        choice = str(decision).strip().upper()
        if choice not in DECISIONS:
            return json.dumps({"error": f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}"})
        self.decision = choice
        return json.dumps({"placed": choice})

    def get_reward(self) -> float:
        """Play the decision (HOLD when none was placed) and score it (``reward`` mode)."""
        if self._point is None:
            raise TrlEnvError("get_reward before reset: no episode")
        if not self.rewards:
            self.rewards = self._score(self.decision or "HOLD")
            if self.decision is None:
                penalty = self._backend.costs.invalid_penalty
                self.rewards = {k: v - penalty for k, v in self.rewards.items()}
        return self.rewards[self.reward_mode]

    # -- internals -------------------------------------------------------------------
    def _run_tool(self, name: str, arguments: dict[str, Any]) -> str:
        if self._tools is None:
            return json.dumps({"error": "no episode: reset first"})
        if self.decision is not None:
            return json.dumps({"error": "the decision is placed: no more tools"})
        self.tool_calls += 1
        if self.tool_calls > self.config.max_tool_calls:
            self.invalid_tool_calls += 1
            return json.dumps(
                {"error": f"tool call cap ({self.config.max_tool_calls}) reached: call trade now"}
            )
        text, valid = masked_tool_answer(self._tools, self._mask, name, arguments)
        self.invalid_tool_calls += 0 if valid else 1
        return text

    def _score(self, decision: str) -> dict[str, float]:
        from stocker_core.agent.policy import decision_action
        from stocker_core.moderator.rewards import buy_and_hold_exposure, exposure

        assert self._point is not None
        costs, before = self._backend.costs, self._point
        action = decision_action(decision, before, costs.transaction_cost)  # type: ignore[arg-type]
        point, reward = self._backend.step(action)
        after_exposure = exposure(point.cash, point.position, before.close)
        total = reward
        for _ in range(self.horizon - 1):
            if point.done:
                break
            point, reward = self._backend.step(Action.hold())
            total += reward
        forward = point.close / before.close - 1.0  # reset left `horizon` sessions after the day
        closes = [*self._closes]
        bh = float(
            buy_and_hold_exposure(closes, costs.starting_cash, costs.transaction_cost)[len(closes) - 1]
        )
        held = exposure(before.cash, before.position, before.close)
        excess = (after_exposure - bh) * forward - costs.transaction_cost * abs(after_exposure - held)
        return {"environment": float(total), "excess": float(excess)}

    def __enter__(self) -> StockerToolEnv:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._backend.close()


for _tool_name in TOOL_NAMES:  # the agent's tools as methods: TRL makes each public method a tool
    setattr(StockerToolEnv, _tool_name, _agent_tool(_tool_name))
