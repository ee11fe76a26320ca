"""Adding a specialist (docs/extending.md): one module declares it, one call registers it,
and the rule council votes with it — per day, in the batched path (which falls back to its
per-day rule, since it has no batch rule) and in the moderator's merge — and an LLM backend
asks it its masked prompt. Unregistered, the council is the seven built-in roles again."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from stocker_testing import SEED_DIR

from stocker_core.council.analysts import RULE_ANALYSTS
from stocker_core.council.backends import LLMBackend, RuleBackend
from stocker_core.council.models import SpecialistVote
from stocker_core.council.registry import Specialist, registered_specialist
from stocker_core.council.roles import ROLE_NAMES, ROLES, RoleMessage, expertise_prompt
from stocker_core.council.rule_batch import rule_votes
from stocker_core.council.voting import Council, run_votes
from stocker_core.decision_context.decision import CouncilInputs, DecisionContext
from stocker_core.market.files_source import FilesSource
from stocker_core.text_events.masking import PromptMask

BUILT_IN = (
    "chart_pattern",
    "seasonal_trend",
    "indicator",
    "news",
    "forum_sentiment",
    "peer_commodity",
    "geopolitics",
)


# --- the toy specialist: everything it is, in this module ---------------------------------


def close_rose(ctx: DecisionContext) -> SpecialistVote:
    """+1 when the day's close is above the previous one, -1 below, 0 flat or without two bars."""
    closes = ctx.bars["close"].to_numpy(float)
    if len(closes) < 2:
        return SpecialistVote.neutral("close_rose", "no data: fewer than two closes")
    move = closes[-1] - closes[-2]
    signal = 1.0 if move > 0 else -1.0 if move < 0 else 0.0
    return SpecialistVote(
        role="close_rose", signal=signal, confidence=0.5, rationale=f"close moved {move:+.2f}"
    )


def close_rose_message(ctx: DecisionContext, m: PromptMask) -> RoleMessage:
    """The last two closes, through the mask."""
    tail = m.price_frame(ctx.bars.tail(2))
    rows = [f"{m.day(d)} C{c:.2f}" for d, c in tail[["date", "close"]].itertuples(index=False)]
    return RoleMessage(f"Stock {m.name(ctx.ticker)}, the last two closes:\n" + "\n".join(rows))


CLOSE_ROSE = Specialist(
    name="close_rose",
    system_prompt=expertise_prompt("one-day momentum analyst: did the stock close above the day before"),
    builder=close_rose_message,
    rule=close_rose,
)

# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inputs() -> CouncilInputs:
    source = FilesSource(SEED_DIR)
    bars = source.fetch("AAPL", pd.Timestamp("2022-06-01").date(), pd.Timestamp("2023-09-01").date())
    return CouncilInputs("AAPL", bars)


@pytest.fixture
def toy():
    with registered_specialist(CLOSE_ROSE) as specialist:
        yield specialist
    assert tuple(ROLE_NAMES) == BUILT_IN  # gone again after the block


def _expected(inputs: CouncilInputs, days: list[pd.Timestamp]) -> dict[pd.Timestamp, float]:
    """The toy's signal on each day, from the bars directly: the sign of the day's move."""
    moves = inputs.bars.set_index("date")["close"].diff()
    return {d: float(np.sign(moves[d])) for d in days}


def test_one_registration_puts_the_toy_last_in_the_council(toy):
    assert tuple(ROLE_NAMES) == (*BUILT_IN, "close_rose")
    assert len(ROLE_NAMES) == 8 and len(RULE_ANALYSTS) == 8
    assert ROLES["close_rose"].system_prompt.startswith("You are the one-day momentum analyst")


def test_the_rule_council_votes_with_the_toy_per_day_and_batched(toy, inputs):
    days = inputs.trading_days("2023-08-01", "2023-08-14")
    expected = _expected(inputs, days)
    assert set(expected.values()) == {1.0, -1.0}  # the days hold rises and falls

    # per day: the council's votes and the moderator's merge of all eight
    council = Council(RuleBackend())
    for day in days:
        decision = council.decide(inputs.context(day))
        by_role = {v.role: v for v in decision.votes}
        assert list(by_role) == [*BUILT_IN, "close_rose"]
        assert (by_role["close_rose"].signal, by_role["close_rose"].confidence) == (expected[day], 0.5)

    # batched: no batch rule, so the batch runs the per-day rule on the day's context
    batch = rule_votes(inputs, days)
    assert {d: batch[("close_rose", d)].signal for d in days} == expected
    assert batch == {(r, d): RULE_ANALYSTS[r](inputs.context(d)) for d in days for r in ROLE_NAMES}

    # the runner's batched path (what the specialist_votes asset uses for the rule backend)
    run = run_votes("AAPL", days, inputs.context, RuleBackend(), inputs=inputs)
    toy_rows = run.votes[run.votes["role"] == "close_rose"]
    assert dict(zip(toy_rows["date"], toy_rows["signal"], strict=True)) == expected
    assert len(run.votes) == 8 * len(days)


class _FakeModel:
    """A chat model that records what it is asked and answers a fixed vote."""

    model_id = "fake"
    supports_images = False

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def complete(self, system: str, user: str, image_path=None) -> str:
        self.asked.append((system, user))
        return json.dumps({"signal": 0.5, "confidence": 0.4, "rationale": "rose"})


def test_an_llm_backend_asks_the_toy_its_masked_prompt(toy, inputs):
    model = _FakeModel()
    ctx = inputs.context("2023-08-15")
    result = LLMBackend(model, mode="free").vote("close_rose", ctx)
    assert (result.vote.role, result.vote.signal, result.vote.confidence) == ("close_rose", 0.5, 0.4)
    system, user = model.asked[0]
    assert system == CLOSE_ROSE.system_prompt
    assert "the last two closes" in user and "AAPL" not in user and "2023" not in user  # masked


def test_a_name_is_registered_once(toy):
    from stocker_core.errors import InvalidNameError

    with pytest.raises(InvalidNameError, match="already registered"), registered_specialist(CLOSE_ROSE):
        pass
