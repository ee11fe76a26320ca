"""The rule council over many days at once: every specialist's votes as columns.

``rule_table`` turns a ticker's inputs into arrays once (``day_arrays.TickerArrays``), cuts
them at every day (``DayGrid``) and runs each specialist's array rule
(``Specialist.batch_rule``: ``rules_price``, ``rules_cross``, ``rules_text``) over all days;
a registered specialist without one gets its per-day rule on each day's context (built
once per day for all such roles), so a new specialist needs no code here. One day's
context is one more source of arrays (``context_table``): the single-day council and
``Specialist.rule`` of the built-in roles run the same array rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pandas as pd

from stocker_core.council.day_arrays import DayGrid, TickerArrays
from stocker_core.council.models import SpecialistVote
from stocker_core.council.registry import SPECIALIST_NAMES, specialist
from stocker_core.council.vote_columns import RoleVotes
from stocker_core.decision_context.decision import CouncilInputs, DecisionContext


@dataclass(frozen=True)
class RuleTable:
    """Rule votes of ``roles`` on ``days``: ``columns[role]`` holds one entry per day."""

    days: list[pd.Timestamp]
    columns: dict[str, RoleVotes]

    def __len__(self) -> int:
        return len(self.days) * len(self.columns)

    def rows(self) -> Iterator[tuple[pd.Timestamp, str, float, float, str]]:
        """(day, role, signal, confidence, rationale), day by day in role order."""
        for i, day in enumerate(self.days):
            for role, votes in self.columns.items():
                yield day, role, votes.signal[i], votes.confidence[i], votes.rationale[i]

    def votes(self) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
        """Every vote as a ``SpecialistVote``, keyed by (role, day)."""
        return {
            (role, day): votes.vote(i)
            for role, votes in self.columns.items()
            for i, day in enumerate(self.days)
        }


def _per_day(arrays: TickerArrays, grid: DayGrid, role: str, contexts: dict) -> RoleVotes:
    """A specialist without an array rule: its per-day rule on each day's context."""
    out = RoleVotes(role)
    for day in grid.days:
        if day not in contexts:
            contexts[day] = arrays.context_of(day)
        out.append_vote(specialist(role).rule(contexts[day]))
    return out


def table_of(arrays: TickerArrays, days: Sequence[pd.Timestamp], roles: Sequence[str]) -> RuleTable:
    """The votes of ``roles`` on ``days`` from a ticker's arrays."""
    grid = DayGrid(arrays, days)
    contexts: dict[pd.Timestamp, DecisionContext] = {}
    columns = {}
    for role in roles:
        rule = specialist(role).batch_rule
        columns[role] = rule(arrays, grid) if rule is not None else _per_day(arrays, grid, role, contexts)
    return RuleTable(grid.days, columns)


def rule_table(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = SPECIALIST_NAMES
) -> RuleTable:
    """Every rule analyst's vote in ``roles`` on each of ``days``, from full-history inputs."""
    return table_of(TickerArrays.from_inputs(inputs), days, roles)


def context_table(ctx: DecisionContext, roles: Sequence[str] = SPECIALIST_NAMES) -> RuleTable:
    """The votes of ``roles`` on one day's context (its date)."""
    return table_of(TickerArrays.from_context(ctx), [ctx.date], roles)


def rule_votes(
    inputs: CouncilInputs, days: Sequence[pd.Timestamp], roles: Sequence[str] = SPECIALIST_NAMES
) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
    """``rule_table`` as ``SpecialistVote`` objects keyed by (role, normalized day)."""
    return rule_table(inputs, days, roles).votes()


def context_vote(role: str, ctx: DecisionContext) -> SpecialistVote:
    """The array rule of ``role`` on one day's context (a built-in ``Specialist.rule``)."""
    return context_table(ctx, [role]).columns[role].vote(0)
