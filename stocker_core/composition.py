"""The composition root: every layer's policies, registered in the one registry
(``stocker_core.env.policies``) from the top.

Each layer that offers policies has a ``register_policies()`` function and registers nothing
at import; this module, on the top floor beside the command tree, imports those layers and
calls them. The ``stocker`` command (``stocker_core.cli``), the Dagster definitions
(``stocker_assets.definitions``) and the tests (``tests/conftest.py``) call
``register_all_policies()`` before anything plays a policy; a program of your own that plays
registered policies calls it too (or registers the few it needs).
"""

from __future__ import annotations

from collections.abc import Callable

from stocker_core.agent import policy as agent_policy
from stocker_core.agent import trl_policy
from stocker_core.baselines import forecast, oracle, rules
from stocker_core.baselines.drl import agents as drl_agents
from stocker_core.council import policy as council_policy
from stocker_core.env import policies as env_policies
from stocker_core.moderator import policy as moderator_policy

POLICY_LAYERS: tuple[Callable[[], None], ...] = (
    env_policies.register_policies,  # hold, buy_and_hold, random, ideal
    rules.register_policies,  # macd, zmr
    forecast.register_policies,  # forecast
    oracle.register_policies,  # oracle
    drl_agents.register_policies,  # a2c, ppo
    council_policy.register_policies,  # council
    moderator_policy.register_policies,  # moderator_base, moderator_sft, moderator_grpo
    agent_policy.register_policies,  # agent_scripted, agent_base, agent_rl
    trl_policy.register_policies,  # agent_trl (opt in)
)
"""Each layer's registration, in the order its policies are registered."""


def register_all_policies() -> None:
    """Register every layer's policies (again: the latest registration of a name wins, so
    calling this twice changes nothing)."""
    for register in POLICY_LAYERS:
        register()
