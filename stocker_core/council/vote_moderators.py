"""Moderators: merge seven votes into one feasible trade."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from stocker_core.council.models import SpecialistVote
from stocker_core.council.parsing import clamp_action, parse_action
from stocker_core.decision_context.decision import PortfolioState
from stocker_core.env.actions import Action
from stocker_core.env.portfolio import max_affordable
from stocker_core.language_model.clients import ChatClient


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


MODERATOR_CHOICES = (
    "hold",
    "buy 25%",
    "buy 50%",
    "buy 75%",
    "buy 100%",
    "sell 25%",
    "sell 50%",
    "sell 75%",
    "sell 100%",
)
"""The scored moderator's nine answers: hold, or a quarter of the affordable shares / of the
position."""
MODERATOR_SCORED_SYSTEM = MODERATOR_SYSTEM.split("Answer with")[0] + (
    'Answer with one JSON object only: {"action": "hold" | "buy 25%" | "buy 50%" | "buy 75%" | '
    '"buy 100%" | "sell 25%" | "sell 50%" | "sell 75%" | "sell 100%"} (buy: share of what the '
    "cash affords; sell: share of the position)."
)
MODERATOR_PREFIX = '{"action": "'


def moderator_prompt(
    votes: Sequence[SpecialistVote],
    portfolio: PortfolioState,
    price: float | None,
    cost_rate: float = 0.001,
    masked: bool = False,
) -> str:
    """The moderator's user message. ``masked``: no price level and no vote rationales
    (a rationale may name the stock or a date); the feasible quantities stay."""
    max_buy = max_affordable(portfolio.cash, price, cost_rate) if price else 0
    lines = [
        json.dumps(
            {"role": v.role, "signal": round(v.signal, 2), "confidence": round(v.confidence, 2)}
            | ({} if masked else {"rationale": v.rationale[:200]})
        )
        for v in votes
    ]
    shown = "" if masked else f"Price {price if price is not None else 'unknown'}, "
    return (
        "Votes:\n" + "\n".join(lines) + f"\n{shown}{'Cash' if masked else 'cash'} {portfolio.cash:.2f}, "
        f"position {portfolio.position} shares, step {portfolio.step + 1} of "
        f"{portfolio.total_steps or '?'}. Feasible: buy 0..{max_buy}, "
        f"sell 0..{portfolio.position}."
    )


def choice_action(
    choice: str, cash: float, position: int, price: float | None, cost_rate: float = 0.001
) -> Action:
    """The feasible action of a ``MODERATOR_CHOICES`` answer: buys round down (always
    affordable), sells round up."""
    side, _, share = choice.partition(" ")
    if side not in ("buy", "sell") or not price:
        return Action.hold()
    quarters = int(share.rstrip("%")) // 25
    if side == "buy":
        quantity = max_affordable(cash, price, cost_rate) * quarters // 4
    else:
        quantity = math.ceil(max(position, 0) * quarters / 4)
    return clamp_action(side, quantity, cash, position, price, cost_rate)


class LLMModerator:
    """A chat model as moderator; quantity clamped; unparsable or failed -> hold.

    A client that can score (``transformers``) in ``mode="scored"`` picks the most likely
    of ``MODERATOR_CHOICES`` (``score_choices``): it cannot fail to parse.
    """

    def __init__(
        self, client: ChatClient, cost_rate: float = 0.001, *, masked: bool = True, mode: str = "scored"
    ) -> None:
        self.client = client
        self.cost_rate = cost_rate
        self.masked, self.mode = masked, mode

    @property
    def scored(self) -> bool:
        return self.mode == "scored" and hasattr(self.client, "score")

    def reset(self) -> None:
        pass

    def prompts(
        self, votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None
    ) -> dict[str, str]:
        """The system and user text this moderator sends."""
        system = MODERATOR_SCORED_SYSTEM if self.scored else MODERATOR_SYSTEM
        user = moderator_prompt(votes, portfolio, price, self.cost_rate, self.masked)
        return {"role": "moderator", "system": system, "user": user}

    def decide(
        self, votes: Sequence[SpecialistVote], portfolio: PortfolioState, price: float | None
    ) -> tuple[Action, str, bool]:
        sent = self.prompts(votes, portfolio, price)
        try:
            if self.scored:
                answers = [f'{c}"' for c in MODERATOR_CHOICES]
                p = self.client.score(sent["system"], sent["user"], MODERATOR_PREFIX, answers)
                best = MODERATOR_CHOICES[int(max(range(len(p)), key=lambda i: p[i]))]
                action = choice_action(best, portfolio.cash, portfolio.position, price, self.cost_rate)
                return action, f"scored: {best} (p = {max(p):.2f})", False
            reply = self.client.complete(sent["system"], sent["user"])
        except Exception as exc:  # never crash an episode on a failed call
            return Action.hold(), f"hold: moderator call failed ({exc})"[:300], True
        return parse_action(reply, portfolio.cash, portfolio.position, price, self.cost_rate)
