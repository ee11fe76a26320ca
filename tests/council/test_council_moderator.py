"""Rule moderator: disagreement -> hold, clamping, hysteresis; council_policy."""

from __future__ import annotations

from stocker_core.council.models import SpecialistVote
from stocker_core.council.vote_moderators import RuleModerator
from stocker_core.council.voting import Council, council_policy
from stocker_core.decision_context.decision import PortfolioState


def _votes(*pairs: tuple[float, float]) -> list[SpecialistVote]:
    return [SpecialistVote(role=f"r{i}", signal=s, confidence=c) for i, (s, c) in enumerate(pairs)]


def test_agreement_buys_scaled_not_all_in():
    action, why, _ = RuleModerator().decide(_votes(*[(0.6, 0.8)] * 7), PortfolioState(10_000), 100)
    assert action.side == "buy" and 0 < action.quantity <= 50, why


def test_disagreement_holds():
    votes = _votes((0.8, 0.9), (0.7, 0.8), (0.6, 0.7), (-0.8, 0.9), (-0.7, 0.8), (-0.5, 0.6))
    action, why, _ = RuleModerator().decide(votes, PortfolioState(10_000), 100)
    assert action.side == "hold" and "disagree" in why


def test_low_confidence_holds():
    action, _, _ = RuleModerator().decide(_votes(*[(1.0, 0.02)] * 7), PortfolioState(10_000), 100)
    assert action.side == "hold"


def test_clamped_to_cash_and_position():
    mod = RuleModerator()
    action, _, _ = mod.decide(_votes(*[(1.0, 1.0)] * 7), PortfolioState(cash=150.0), 100)
    assert action.side == "buy" and action.quantity == 0 or action.quantity * 100 <= 150
    action, _, _ = mod.decide(_votes(*[(1.0, 1.0)] * 7), PortfolioState(cash=50.0), 100)
    assert action.side == "hold"
    action, _, _ = RuleModerator().decide(_votes(*[(-1.0, 1.0)] * 7), PortfolioState(cash=0, position=3), 100)
    assert action.side == "sell" and action.quantity == 3
    action, _, _ = RuleModerator().decide(_votes(*[(-1.0, 1.0)] * 7), PortfolioState(0), 100)
    assert action.side == "hold"


def test_hysteresis_needs_more_to_reverse_soon_after_a_trade():
    mod = RuleModerator()
    action, _, _ = mod.decide(_votes(*[(0.5, 0.8)] * 7), PortfolioState(10_000, 0, step=0), 100)
    assert action.side == "buy"
    weak_sell = _votes(*[(-0.15, 0.8)] * 7)  # above enter threshold, below enter + margin
    action, why, _ = mod.decide(weak_sell, PortfolioState(5_000, 40, step=1), 100)
    assert action.side == "hold" and "threshold" in why
    action, _, _ = mod.decide(weak_sell, PortfolioState(5_000, 40, step=10), 100)
    assert action.side == "sell"
    fresh = RuleModerator()
    action, _, _ = fresh.decide(weak_sell, PortfolioState(5_000, 40, step=1), 100)
    assert action.side == "sell"


def test_council_policy_returns_action_dict(easy_inputs):
    ctx = easy_inputs.context("2023-09-27")
    action = council_policy(ctx, PortfolioState(cash=0.0, position=10, step=39, total_steps=43))
    assert set(action) == {"side", "quantity"} and action["side"] in {"buy", "sell", "hold"}
    decision = Council().decide(ctx)
    assert len(decision.votes) == 7 and decision.rationale


def test_moderator_is_chosen_by_configuration(monkeypatch):
    from stocker_core.config import Settings
    from stocker_core.council.backends import get_moderator
    from stocker_core.council.vote_moderators import LLMModerator, RuleModerator

    assert isinstance(get_moderator(Settings()), RuleModerator)
    monkeypatch.setenv("STOCKER_COUNCIL_MODERATOR", "llm")
    monkeypatch.setenv("STOCKER_COUNCIL_BACKEND", "openai")
    monkeypatch.setenv("STOCKER_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    moderator = get_moderator(Settings())
    assert isinstance(moderator, LLMModerator)
    # the endpoint is unreachable: the moderator holds instead of crashing
    from stocker_core.council.models import SpecialistVote
    from stocker_core.decision_context.decision import PortfolioState

    votes = [SpecialistVote(role="indicator", signal=0.9, confidence=0.9, rationale="x")]
    monkeypatch.setattr(moderator.client, "retries", 0, raising=False)
    action, _rationale, parse_error = moderator.decide(votes, PortfolioState(cash=1000), 10.0)
    assert action.side == "hold" and parse_error


def test_a_hold_says_its_true_cause():
    """With $10,000 in cash, "no cash" would be false: the conviction-scaled budget is short."""
    votes = _votes(*[(0.2, 0.5)] * 7)  # signal 0.2 at confidence 0.5: conviction 0.2 × 1.0 × 1.5 = 0.3
    action, why, _ = RuleModerator().decide(votes, PortfolioState(10_000), 4_000)
    assert action.side == "hold"
    assert why == (
        "hold: would buy (weighted signal +0.20, disagreement 0.00) but its budget 1,500.00 "
        "(50% of cash 10,000.00 × conviction 0.30) is below one share (4,004.00 with costs)"
    )
    _, why, _ = RuleModerator().decide(_votes(*[(1.0, 1.0)] * 7), PortfolioState(cash=50.0), 100)
    assert why.endswith("but cash 50.00 is below one share (100.10 with costs)")
    _, why, _ = RuleModerator().decide(_votes(*[(-1.0, 1.0)] * 7), PortfolioState(cash=0, position=0), 100)
    assert why.endswith("but no position to sell")
