"""Run and score decisions over (ticker, day) pairs: traces with their scores, and the
summary a validation curve or a θ table shows (mean scores, action mix)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.data import AgentData
from stocker_core.agent.loop import TurnWriter, run_decisions
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.rewards import score_trace
from stocker_core.agent.tools import AgentTools
from stocker_core.agent.trace import Trace


def tools_for(pairs: Sequence[tuple[str, pd.Timestamp]], data: dict[str, AgentData]) -> list[AgentTools]:
    """One AgentTools per (ticker, day) pair."""
    return [AgentTools(data[ticker], day) for ticker, day in pairs]


def run_scored(
    writer: TurnWriter,
    pairs: Sequence[tuple[str, pd.Timestamp]],
    data: dict[str, AgentData],
    config: AgentConfig,
    policy: str,
) -> list[Trace]:
    """Traces of ``writer`` on every pair, each scored against its forward return."""
    traces = run_decisions(writer, tools_for(pairs, data), config, policy)
    for trace, (ticker, day) in zip(traces, pairs, strict=True):
        score_trace(trace, data[ticker].forward_return(day, config.horizon), config)
    return traces


@dataclass(frozen=True)
class ScoreSummary:
    """Mean scores of a set of traces and the share of each action (no answer counts as HOLD)."""

    n: int
    result: float
    format: float
    tool: float
    total: float
    actions: dict[str, float]
    answered: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "result": self.result,
            "format": self.format,
            "tool": self.tool,
            "total": self.total,
            "answered": self.answered,
            **{f"share_{a.lower()}": self.actions[a] for a in DECISIONS},
        }


def summarise(traces: Sequence[Trace]) -> ScoreSummary:
    """Means over scored ``traces``."""
    n = len(traces)
    if n == 0:
        return ScoreSummary(0, 0.0, 0.0, 0.0, 0.0, dict.fromkeys(DECISIONS, 0.0), 0.0)
    scores = [t.scores for t in traces if t.scores is not None]
    counts = Counter(t.action for t in traces)

    def mean(name: str) -> float:
        return sum(getattr(s, name) for s in scores) / len(scores) if scores else 0.0

    return ScoreSummary(
        n,
        mean("result"),
        mean("format"),
        mean("tool"),
        mean("total"),
        {a: counts[a] / n for a in DECISIONS},
        sum(t.decision is not None for t in traces) / n,
    )
