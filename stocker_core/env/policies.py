"""Built-in policies and the registry others (e.g. the council) add theirs to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.episode import Episode
from stocker_core.env.plans import Plan, PlanFactory, buy_and_hold_plan, hold_plan, ideal_plan
from stocker_core.env.portfolio import max_affordable
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import InvalidNameError

if TYPE_CHECKING:
    from stocker_core.config import Settings


class Policy(Protocol):
    """Maps the current observation to an action."""

    def act(self, observation: Observation) -> Action: ...


PolicyFactory = Callable[[TradingEnv, int | None], Policy]
"""Builds a policy for an environment (seeded where it is random)."""

BatchDecider = Callable[[Sequence[int], Sequence[Observation]], Sequence[Action]]
"""``decide(indices, observations)``: one action for each live environment of a batch (the
indices say which), so one model call serves step t of every episode."""

BatchPolicyFactory = Callable[[Sequence[TradingEnv], Sequence[int | None]], BatchDecider]
"""Builds one decider for many environments (one seed each): what a model policy offers so
that backtests play many episodes in lockstep instead of one model call per step."""


def long_flat_action(want_long: bool, observation: Observation, cost: float) -> Action:
    """All in (the most whole shares cash buys) when ``want_long`` and flat, sell the whole
    position when not, else hold: the trade of every long/flat rule."""
    if want_long and observation.position == 0:
        qty = max_affordable(observation.cash, observation.close, cost)
        return Action.buy(qty) if qty else Action.hold()
    if not want_long and observation.position > 0:
        return Action.sell(observation.position)
    return Action.hold()


class HoldPolicy:
    """Never trades."""

    def act(self, observation: Observation) -> Action:
        return Action.hold()


class BuyAndHoldPolicy:
    """Buys as many whole shares as cash allows on day 1, then holds."""

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def act(self, observation: Observation) -> Action:
        if observation.step == 0:
            return Action.buy(max_affordable(observation.cash, observation.close, self.cost))
        return Action.hold()


class RandomPolicy:
    """Uniform side; quantity up to one share past what is feasible (so some are invalid)."""

    def __init__(self, cost: float, seed: int | None = None) -> None:
        self.cost = cost
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> Action:
        side = ("hold", "buy", "sell")[int(self.rng.integers(3))]
        if side == "buy":
            top = max_affordable(observation.cash, observation.close, self.cost) + 1
        elif side == "sell":
            top = observation.position + 1
        else:
            return Action.hold()
        return Action(side=side, quantity=int(self.rng.integers(0, top + 1)))


class IdealPolicy:
    """Follows the exact-optimum flat/long path in whole shares (all in / all out)."""

    def __init__(self, env: TradingEnv) -> None:
        self.long = env.ideal.long
        self.cost = env.params.transaction_cost

    def act(self, observation: Observation) -> Action:
        return long_flat_action(bool(self.long[observation.step]), observation, self.cost)


POLICIES: dict[str, PolicyFactory] = {
    "hold": lambda env, seed: HoldPolicy(),
    "buy_and_hold": lambda env, seed: BuyAndHoldPolicy(env.params.transaction_cost),
    "random": lambda env, seed: RandomPolicy(env.params.transaction_cost, seed),
    "ideal": lambda env, seed: IdealPolicy(env),
}


BATCH_POLICIES: dict[str, BatchPolicyFactory] = {}
"""Policies that can also decide many environments at once (trained models)."""

PLANS: dict[str, PlanFactory] = {"hold": hold_plan, "buy_and_hold": buy_and_hold_plan, "ideal": ideal_plan}
"""Policies whose whole-episode actions are known at once (``env.plans``): planned at once and
graded in a batch by the backtest."""


def register_policy(
    name: str,
    factory: PolicyFactory,
    batch: BatchPolicyFactory | None = None,
    *,
    plan: PlanFactory | None = None,
) -> None:
    """Add (or replace) a named policy, e.g. ``register_policy("council", make_council)``;
    ``batch`` builds one decider for many environments (see ``make_batch_decider``), ``plan``
    the whole episode's actions at once (see ``plan_for``)."""
    POLICIES[name] = factory
    for table, entry in ((BATCH_POLICIES, batch), (PLANS, plan)):
        if entry is None:
            table.pop(name, None)
        else:
            table[name] = entry


# Policies living in other packages register themselves when imported.
PLUGIN_MODULES = {
    "council": "stocker_core.council.policy",
    "a2c": "stocker_core.baselines.drl.agents",
    "ppo": "stocker_core.baselines.drl.agents",
    "forecast": "stocker_core.baselines.forecast",
    "macd": "stocker_core.baselines.rules",
    "oracle": "stocker_core.baselines.oracle",
    "zmr": "stocker_core.baselines.rules",
    "moderator_base": "stocker_core.moderator.policy",
    "moderator_sft": "stocker_core.moderator.policy",
    "moderator_grpo": "stocker_core.moderator.policy",
    "agent_scripted": "stocker_core.agent.policy",
    "agent_base": "stocker_core.agent.policy",
    "agent_rl": "stocker_core.agent.policy",
}

OPT_IN_MODULES = {"agent_trl": "stocker_core.agent.trl_policy"}
"""Policies played only when named (``--policies agent_trl``), never among "every policy":
their model is trained outside the pipeline (``examples/train_trl_grpo.py``)."""

UPPER_BOUNDS = {"ideal"}
"""Policies that see the future (hindsight upper bounds, not strategies): labelled in every table."""

FITTED_ON_TRAIN = {"moderator_sft", "moderator_grpo", "agent_base", "agent_rl", "agent_trl", "a2c", "ppo"}
"""Policies whose models were fitted on the train split: backtests of train-split episodes
leave them out (their numbers there are in-sample, and the most expensive to compute)."""


def policy_names(opt_in: bool = False) -> list[str]:
    """Every policy name: the registered ones and those of plugin modules not imported yet;
    the ``OPT_IN_MODULES`` ones only with ``opt_in``."""
    names = {*POLICIES, *PLUGIN_MODULES}
    return sorted(names | set(OPT_IN_MODULES) if opt_in else names - set(OPT_IN_MODULES))


def is_fitted_on_train(name: str) -> bool:
    """True for a policy whose model learned from the train split (``FITTED_ON_TRAIN``)."""
    return name in FITTED_ON_TRAIN


def is_upper_bound(name: str) -> bool:
    """True for a hindsight upper bound such as ``ideal``."""
    return name in UPPER_BOUNDS


def _import_plugin(name: str) -> None:
    module = PLUGIN_MODULES.get(name) or OPT_IN_MODULES.get(name)
    if name not in POLICIES and module:
        import importlib

        importlib.import_module(module)


def make_batch_decider(
    name: str, envs: Sequence[TradingEnv], seeds: Sequence[int | None]
) -> BatchDecider | None:
    """One decider for every environment of ``envs`` when policy ``name`` offers one (a
    trained model), else None: the caller plays such a policy one environment at a time."""
    _import_plugin(name)
    factory = BATCH_POLICIES.get(name)
    return factory(envs, seeds) if factory is not None else None


def has_plan(name: str) -> bool:
    """True when policy ``name`` registered a whole-episode plan."""
    _import_plugin(name)
    return name in PLANS


def plan_for(
    name: str, episode: Episode, params: RewardParams, settings: Settings | None = None
) -> Plan | None:
    """The whole-episode plan of ``name`` on ``episode``, or None when it has none."""
    _import_plugin(name)
    factory = PLANS.get(name)
    return factory(episode, params, settings) if factory else None


def make_policy(name: str, env: TradingEnv, seed: int | None = None) -> Policy:
    """The named policy for ``env``; InvalidNameError listing the known names otherwise."""
    _import_plugin(name)
    try:
        factory = POLICIES[name]
    except KeyError:
        known = ", ".join(policy_names(opt_in=True))
        raise InvalidNameError(f"unknown policy {name!r}: use one of {known}") from None
    return factory(env, seed)


def run_episode(env: TradingEnv, policy: Policy) -> dict[str, Any]:
    """Play the whole episode from reset with ``policy``; return the trajectory dict."""
    observation = env.reset()
    while not env.done:
        observation = env.step(policy.act(observation)).observation
    return env.trajectory()
