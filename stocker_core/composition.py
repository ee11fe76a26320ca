"""The composition root: the one place that registers every extension — the market data
sources, the council's specialists, the report's statistics and every layer's policies.

No module registers anything at import. Each layer that offers extensions has a function that
registers its own (``register_sources``, ``register_specialists``, ``register_statistics``,
``register_policies``); this module, on the top floor beside the command tree, calls them in
``register_all()``. The ``stocker`` command (``stocker_core.cli``), the Dagster definitions
(``stocker_assets.definitions``), the servers' ASGI entry (``stocker_core.asgi``) and the tests
(``tests/conftest.py``) call it before anything reads a registry; a program of your own calls
it too (or registers the few things it needs). Calling it again changes nothing.

Registering is cheap: no layer imports torch, transformers or Dagster at import; a model is
loaded when a policy is built, not when it is registered.
"""

from __future__ import annotations

from collections.abc import Callable

from stocker_core.agent import env_tools as agent_env_tools
from stocker_core.agent import policy as agent_policy
from stocker_core.agent import trl_policy
from stocker_core.baselines import forecast, oracle, rules
from stocker_core.baselines.drl import agents as drl_agents
from stocker_core.council import policy as council_policy
from stocker_core.council import specialists
from stocker_core.env import policies as env_policies
from stocker_core.evaluation import report_statistics
from stocker_core.market import source_builder
from stocker_core.moderator import policy as moderator_policy

REGISTRATIONS: tuple[Callable[[], None], ...] = (
    source_builder.register_sources,  # sources: sample, files, yfinance, synthetic
    specialists.register_specialists,  # the council's seven specialists, in its order
    report_statistics.register_statistics,  # the report's statistics the project ships
    env_policies.register_policies,  # hold, buy_and_hold, random, ideal
    rules.register_policies,  # macd, zmr
    forecast.register_policies,  # forecast
    oracle.register_policies,  # oracle
    drl_agents.register_policies,  # a2c, ppo
    council_policy.register_policies,  # council
    moderator_policy.register_policies,  # moderator_base, moderator_sft, moderator_grpo
    agent_policy.register_policies,  # agent_scripted, agent_base, agent_rl
    trl_policy.register_policies,  # agent_trl (opt in)
    agent_env_tools.register_research_tools,  # the server's MCP research tools: the agent's seven
)
"""Each layer's registration, in the order it runs (the order of the registries' entries)."""


def register_all() -> None:
    """Register every extension of every layer: sources, specialists, statistics, policies.
    Idempotent: a second call leaves every registry as the first left it."""
    for register in REGISTRATIONS:
        register()
