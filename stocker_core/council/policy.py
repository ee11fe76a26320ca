"""The council as an environment policy (``--policy council``)."""

from __future__ import annotations

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.backends import Backend, get_backend, get_moderator
from stocker_core.council.cache import VoteCache
from stocker_core.council.run_stats import CouncilTally
from stocker_core.council.vote_moderators import Moderator
from stocker_core.council.voting import Council
from stocker_core.decision_context.decision import PortfolioState
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.peers import council_inputs
from stocker_core.env.policies import register_policy, require_settings
from stocker_core.text_events.store import warehouse_text
from stocker_core.warehouse.db import Warehouse


class CouncilPolicy:
    """Seven specialists (cached votes) and a moderator decide each step's trade; ``tally``
    counts the decisions that fell back to a default."""

    def __init__(
        self,
        env: TradingEnv,
        settings: Settings,
        backend: Backend | None = None,
        moderator: Moderator | None = None,
    ) -> None:
        episode = env.episode
        warehouse = Warehouse(settings.warehouse_path)
        self.inputs = council_inputs(
            episode.ticker, episode.start, episode.end, settings, warehouse_text(warehouse)
        )
        moderator = moderator or get_moderator(settings, cost_rate=settings.transaction_cost)
        self.council = Council(backend or get_backend(settings), moderator, VoteCache(warehouse))
        self.last_decision = None
        self.tally = CouncilTally()  # how often a vote or the moderator fell back to a default

    def act(self, observation: Observation) -> Action:
        if observation.step == 0:
            self.council.moderator.reset()
        portfolio = PortfolioState(
            cash=observation.cash,
            position=observation.position,
            step=observation.step,
            total_steps=observation.total_steps,
        )
        context = self.inputs.context(pd.Timestamp(observation.date), portfolio)
        self.last_decision = self.council.decide(context)
        self.tally.add(self.last_decision)
        return self.last_decision.action


def register_policies() -> None:
    """``council`` (called by the composition root)."""
    register_policy(
        "council", lambda env, seed, settings: CouncilPolicy(env, require_settings("council", settings))
    )
