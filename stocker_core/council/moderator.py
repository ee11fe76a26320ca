"""Moderators: merge seven votes into one feasible trade."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from stocker_core.context.decision import PortfolioState
from stocker_core.council.llm import ChatClient
from stocker_core.council.models import SpecialistVote
from stocker_core.council.parsing import clamp_action, parse_action
from stocker_core.env.actions import Action


class Moderator(Protocol):
    """Turns votes and the portfolio into an action and a rationale."""

    def decide(
        self, votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None
    ) -> tuple[Action, str, bool]:
        """``(action, rationale, parse_error)``; the action is always feasible."""
        ...

    def reset(self) -> None:
        """Forget state carried between days (start of an episode)."""
        ...


@dataclass
class RuleModeratorConfig:
    """Thresholds of the rule moderator."""

    enter_threshold: float = 0.12  # |weighted signal| needed to trade
    reverse_margin: float = 0.10  # extra needed to trade against the last trade (hysteresis)
    cooldown_steps: int = 3  # the margin applies this many steps after a trade
    disagreement_limit: float = 0.6  # opposing/supporting confidence ratio that forces hold
    min_total_confidence: float = 0.3
    max_buy_fraction: float = 0.5  # of cash, at full conviction
    cost_rate: float = 0.001


class RuleModerator:
    """Confidence-weighted signal -> side; conviction-scaled quantity clamped to cash or
    position; hold when the council disagrees; hysteresis against churn."""

    def __init__(self, config: RuleModeratorConfig | None = None) -> None:
        self.config = config or RuleModeratorConfig()
        self.reset()

    def reset(self) -> None:
        self.last_side = "hold"
        self.last_trade_step: int | None = None

    def decide(
        self, votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None
    ) -> tuple[Action, str, bool]:
        cfg = self.config
        total_conf = sum(v.confidence for v in votes)
        if total_conf < cfg.min_total_confidence:
            return Action.hold(), f"hold: council confidence {total_conf:.2f} too low", False
        score = sum(v.signal * v.confidence for v in votes) / total_conf
        pos = sum(v.confidence for v in votes if v.signal > 0.1)
        neg = sum(v.confidence for v in votes if v.signal < -0.1)
        disagreement = min(pos, neg) / max(pos, neg) if max(pos, neg) > 0 else 0.0
        summary = f"weighted signal {score:+.2f}, disagreement {disagreement:.2f}"
        if disagreement > cfg.disagreement_limit:
            return Action.hold(), f"hold: council disagrees ({summary})", False
        side = "buy" if score > 0 else "sell"
        threshold = cfg.enter_threshold
        recent = (
            self.last_trade_step is not None and portfolio.step - self.last_trade_step < cfg.cooldown_steps
        )
        if self.last_side in ("buy", "sell") and side != self.last_side and recent:
            threshold += cfg.reverse_margin
        if abs(score) < threshold:
            return Action.hold(), f"hold: {summary} below threshold {threshold:.2f}", False
        mean_conf = total_conf / max(len(votes), 1)
        conviction = min(1.0, abs(score) * (0.5 + mean_conf) * (1 - disagreement) * 1.5)
        budget = portfolio.cash * cfg.max_buy_fraction * conviction
        if side == "buy":
            qty = math.floor(budget / (price * (1 + cfg.cost_rate))) if price else 0
        else:
            qty = math.ceil(portfolio.position * conviction)
        action = clamp_action(side, qty, portfolio.cash, portfolio.position, price, cfg.cost_rate)
        if action.side == "hold":
            why = _why_not(side, portfolio, price, budget, conviction, cfg)
            return action, f"hold: would {side} ({summary}) but {why}", False
        self.last_side, self.last_trade_step = action.side, portfolio.step
        why = f"{action.side} {action.quantity} ({summary}, conviction {conviction:.2f})"
        return action, why, False


def _why_not(
    side: str,
    portfolio: PortfolioState,
    price: float | None,
    budget: float,
    conviction: float,
    cfg: RuleModeratorConfig,
) -> str:
    """The true reason a wanted trade came out as no trade."""
    if side == "sell":
        return "no position to sell"
    share = (price or 0.0) * (1 + cfg.cost_rate)
    if not price or portfolio.cash < share:
        return f"cash {portfolio.cash:,.2f} is below one share ({share:,.2f} with costs)"
    return (
        f"its budget {budget:,.2f} ({cfg.max_buy_fraction:.0%} of cash {portfolio.cash:,.2f} × conviction "
        f"{conviction:.2f}) is below one share ({share:,.2f} with costs)"
    )


MODERATOR_SYSTEM = (
    "You are the moderator of a trading council of seven specialists. You see their votes "
    "(signal in [-1, 1] from sell to buy, confidence in [0, 1]), the price, cash, position "
    "and step. Output one trade. Rules: quantities must be feasible (buy no more than the "
    "cash affords, sell no more than the position); prefer scaled moves over all-in; favour "
    "hold when the specialists disagree; take a long-term view; do not churn. Answer with "
    'one JSON object only: {"side": "buy" | "sell" | "hold", "quantity": <int >= 0>, '
    '"rationale": "<one sentence>"}.'
)


def moderator_prompt(
    votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None, cost_rate: float = 0.001
) -> str:
    """The moderator's user message."""
    max_buy = int(portfolio.cash // (price * (1 + cost_rate))) if price else 0
    lines = [
        json.dumps(
            {
                "role": v.role,
                "signal": round(v.signal, 2),
                "confidence": round(v.confidence, 2),
                "rationale": v.rationale[:200],
            }
        )
        for v in votes
    ]
    return (
        "Votes:\n"
        + "\n".join(lines)
        + f"\nPrice {price if price is not None else 'unknown'}, cash {portfolio.cash:.2f}, "
        f"position {portfolio.position} shares, step {portfolio.step + 1} of "
        f"{portfolio.total_steps or '?'}. Feasible: buy 0..{max_buy}, "
        f"sell 0..{portfolio.position}."
    )


class LLMModerator:
    """A chat model as moderator; quantity clamped; unparsable or failed -> hold."""

    def __init__(self, client: ChatClient, cost_rate: float = 0.001) -> None:
        self.client = client
        self.cost_rate = cost_rate

    def reset(self) -> None:
        pass

    def decide(
        self, votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None
    ) -> tuple[Action, str, bool]:
        try:
            reply = self.client.complete(
                MODERATOR_SYSTEM, moderator_prompt(votes, portfolio, price, self.cost_rate)
            )
        except Exception as exc:  # never crash an episode on a failed call
            return Action.hold(), f"hold: moderator call failed ({exc})"[:300], True
        return parse_action(reply, portfolio.cash, portfolio.position, price, self.cost_rate)
