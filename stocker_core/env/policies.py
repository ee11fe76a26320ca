"""The policy registry and the environment's own policies.

Every policy is registered with ``register_policy`` together with what is known about it (a
batch decider, a whole-episode plan, fitted on the train split, a hindsight upper bound, opt
in). Nothing registers at import, this module included: each layer that offers policies (this
one: ``hold``, ``buy_and_hold``, ``random``, ``ideal``) has a ``register_policies()`` function,
and the composition root at the top (``stocker_core.composition.register_all``, called by the
``stocker`` command, the Dagster definitions, the servers and the tests) calls them all.
Factories receive the caller's settings; none reads settings of its own.
"""

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
from stocker_core.errors import InvalidNameError, StockerError

if TYPE_CHECKING:
    from stocker_core.config import Settings


class Policy(Protocol):
    """Maps the current observation to an action."""

    def act(self, observation: Observation) -> Action: ...


PolicyFactory = Callable[[TradingEnv, int | None, "Settings | None"], Policy]
"""``factory(env, seed, settings)``: a policy for an environment (seeded where it is random;
``settings`` are the caller's, for a policy that reads stored data or a model)."""

BatchDecider = Callable[[Sequence[int], Sequence[Observation]], Sequence[Action]]
"""``decide(indices, observations)``: one action for each live environment of a batch (the
indices say which), so one model call serves step t of every episode."""

BatchPolicyFactory = Callable[[Sequence[TradingEnv], Sequence[int | None], "Settings | None"], BatchDecider]
"""``batch(envs, seeds, settings)``: one decider for many environments (one seed each): what a
model policy offers so that backtests play many episodes in lockstep instead of one model
call per step."""


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


POLICIES: dict[str, PolicyFactory] = {}
"""Every registered policy's factory, by name (fill it with ``register_policy``)."""

BATCH_POLICIES: dict[str, BatchPolicyFactory] = {}
"""Policies that can also decide many environments at once (trained models)."""

PLANS: dict[str, PlanFactory] = {}
"""Policies whose whole-episode actions are known at once (``env.plans``): planned at once and
graded in a batch by the backtest."""

UPPER_BOUNDS: set[str] = set()
"""Policies that see the future (hindsight upper bounds, not strategies): labelled in every
table. Kept by ``register_policy`` (``upper_bound=True``)."""

FITTED_ON_TRAIN: set[str] = set()
"""Policies whose models were fitted on the train split: backtests of train-split episodes
leave them out (their numbers there are in-sample, and the most expensive to compute). Kept by
``register_policy`` (``fitted_on_train=True``)."""

OPT_IN: set[str] = set()
"""Policies played only when named (``--policies agent_trl``), never among "every policy"
(e.g. a model trained outside the pipeline). Kept by ``register_policy`` (``opt_in=True``)."""


class SettingsRequiredError(StockerError, ValueError):
    """A policy that reads stored data or a trained model was asked for without settings."""


def register_policy(
    name: str,
    factory: PolicyFactory,
    batch: BatchPolicyFactory | None = None,
    *,
    plan: PlanFactory | None = None,
    fitted_on_train: bool = False,
    upper_bound: bool = False,
    opt_in: bool = False,
) -> None:
    """Add (or replace) a named policy with the facts about it:
    ``register_policy("macd", lambda env, seed, settings: MacdPolicy(...), plan=macd_plan)``.

    ``factory(env, seed, settings)`` builds the policy for one environment (``settings``: the
    caller's, None when it has none; a policy that reads stored data or a model calls
    ``require_settings``). ``batch(envs, seeds, settings)`` builds one decider for many
    environments (see ``make_batch_decider``); ``plan(episode, params, settings)`` the whole
    episode's actions at once (see ``plan_for``). ``fitted_on_train``: its model learned from
    the train split (not played on train-split episodes); ``upper_bound``: it sees the future;
    ``opt_in``: played only when named.

    Each layer offers ``register_policies()``; the composition root
    (``stocker_core.composition.register_all``) calls them, so nothing below it names a module
    above."""
    POLICIES[name] = factory
    for table, entry in ((BATCH_POLICIES, batch), (PLANS, plan)):
        if entry is None:
            table.pop(name, None)
        else:
            table[name] = entry
    for flags, on in ((FITTED_ON_TRAIN, fitted_on_train), (UPPER_BOUNDS, upper_bound), (OPT_IN, opt_in)):
        if on:
            flags.add(name)
        else:
            flags.discard(name)


def unregister_policy(name: str) -> None:
    """Remove ``name`` and its facts from the registry (a no-op when it is not registered)."""
    for table in (POLICIES, BATCH_POLICIES, PLANS):
        table.pop(name, None)
    for flags in (FITTED_ON_TRAIN, UPPER_BOUNDS, OPT_IN):
        flags.discard(name)


def require_settings(name: str, settings: Settings | None) -> Settings:
    """``settings`` for policy ``name``, which reads stored data or a trained model with them;
    SettingsRequiredError when its caller passed none."""
    if settings is None:
        raise SettingsRequiredError(
            f"policy {name!r} reads stored data or a trained model: its caller passes the run's "
            "settings (make_policy(..., settings=...), backtest(..., settings=...))"
        )
    return settings


def policy_names(opt_in: bool = False) -> list[str]:
    """Every registered policy name; the opt-in ones (``OPT_IN``) only with ``opt_in``."""
    return sorted(POLICIES if opt_in else set(POLICIES) - OPT_IN)


def is_fitted_on_train(name: str) -> bool:
    """True for a policy whose model learned from the train split (``FITTED_ON_TRAIN``)."""
    return name in FITTED_ON_TRAIN


def is_upper_bound(name: str) -> bool:
    """True for a hindsight upper bound such as ``ideal``."""
    return name in UPPER_BOUNDS


def make_batch_decider(
    name: str, envs: Sequence[TradingEnv], seeds: Sequence[int | None], settings: Settings | None = None
) -> BatchDecider | None:
    """One decider for every environment of ``envs`` when policy ``name`` offers one (a
    trained model), else None: the caller plays such a policy one environment at a time."""
    factory = BATCH_POLICIES.get(name)
    return factory(envs, seeds, settings) if factory is not None else None


def has_plan(name: str) -> bool:
    """True when policy ``name`` registered a whole-episode plan."""
    return name in PLANS


def plan_for(
    name: str, episode: Episode, params: RewardParams, settings: Settings | None = None
) -> Plan | None:
    """The whole-episode plan of ``name`` on ``episode``, or None when it has none."""
    factory = PLANS.get(name)
    return factory(episode, params, settings) if factory else None


def make_policy(
    name: str, env: TradingEnv, seed: int | None = None, settings: Settings | None = None
) -> Policy:
    """The named policy for ``env`` (``settings``: the caller's, for a policy that reads stored
    data or a model); InvalidNameError listing the known names otherwise."""
    try:
        factory = POLICIES[name]
    except KeyError:
        known = ", ".join(policy_names(opt_in=True))
        if not known:
            raise InvalidNameError(
                f"unknown policy {name!r}: none is registered (call stocker_core.composition.register_all())"
            ) from None
        raise InvalidNameError(f"unknown policy {name!r}: use one of {known}") from None
    return factory(env, seed, settings)


def register_policies() -> None:
    """The environment's own policies: ``hold``, ``buy_and_hold``, ``random`` and the hindsight
    ``ideal`` (an upper bound), each with its plan where it has one."""
    register_policy("hold", lambda env, seed, settings: HoldPolicy(), plan=hold_plan)
    register_policy(
        "buy_and_hold",
        lambda env, seed, settings: BuyAndHoldPolicy(env.params.transaction_cost),
        plan=buy_and_hold_plan,
    )
    register_policy("random", lambda env, seed, settings: RandomPolicy(env.params.transaction_cost, seed))
    register_policy("ideal", lambda env, seed, settings: IdealPolicy(env), plan=ideal_plan, upper_bound=True)


def run_episode(env: TradingEnv, policy: Policy) -> dict[str, Any]:
    """Play the whole episode from reset with ``policy``; return the trajectory dict."""
    observation = env.reset()
    while not env.done:
        observation = env.step(policy.act(observation)).observation
    return env.trajectory()
