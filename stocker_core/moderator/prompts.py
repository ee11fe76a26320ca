"""The moderator's prompt and completion: bucketed words a tiny word-level model can read.

A prompt states what SPEC §1 gives the moderator: the seven votes (signal and
confidence as bucket words, ``p4`` = +0.4, ``m2`` = -0.2, ``c7`` = confidence 0.7),
the price (its 5-day move), the portfolio (share of value invested, profit so far)
and the step. A completion is a side and a size: ``hold q0`` or ``buy``/``sell``
``q1``..``q4``, a quarter of the feasible maximum (affordable shares for a buy, the
position for a sell) — the moderator prefers scaled moves over all-in.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from stocker_core.council.models import SpecialistVote
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.env.actions import Action
from stocker_core.env.portfolio import max_affordable

SIGNAL_WORDS = [f"m{i}" for i in range(10, 0, -1)] + [f"p{i}" for i in range(11)]
CONFIDENCE_WORDS = [f"c{i}" for i in range(11)]
MOVE_WORDS = [f"d{i:+d}" for i in range(-5, 6)]
EXPOSURE_WORDS = [f"e{i}" for i in range(5)]
PNL_WORDS = [f"g{i:+d}" for i in range(-5, 6)]
STEP_WORDS = [f"t{i}" for i in range(10)]
SIDES = ("hold", "buy", "sell")
SIZE_WORDS = [f"q{i}" for i in range(5)]
FIELD_WORDS = ["move", "exposure", "pnl", "step", "action"]
QUARTERS = 4
MOVE_LOOKBACK = 5

MODERATOR_TRAINING_SYSTEM = (
    "You are the moderator of a trading council of seven specialists. Each vote has a signal "
    "from -1 (sell) to +1 (buy) and a confidence from 0 to 1. Merge them into one trade. "
    "Prefer scaled moves, favour hold when the specialists disagree, do not churn. Answer with "
    "a side and a size only: 'hold q0', or 'buy q1'..'buy q4' (quarters of the shares the cash "
    "affords), or 'sell q1'..'sell q4' (quarters of the position)."
)

_COMPLETION = re.compile(r"\b(hold|buy|sell)\b(?:\s+q([0-4])\b)?", re.IGNORECASE)


def vocabulary() -> list[str]:
    """Every word a prompt or completion of the tiny format can contain (no specials)."""
    return [
        *ROLE_NAMES,
        *SIGNAL_WORDS,
        *CONFIDENCE_WORDS,
        *MOVE_WORDS,
        *EXPOSURE_WORDS,
        *PNL_WORDS,
        *STEP_WORDS,
        *FIELD_WORDS,
        *SIDES,
        *SIZE_WORDS,
    ]


def ordered_word_groups() -> list[dict[str, float]]:
    """The prompt's ordered bucket words, each group as ``{word: position in [-1, 1]}`` (signal
    m10 … p10, confidence, move, exposure, pnl, step): what
    ``language_model.factory.order_embeddings`` spreads along one direction so that neighbouring
    buckets start with neighbouring embeddings."""

    def spread(words: Sequence[str]) -> dict[str, float]:
        last = len(words) - 1
        return {word: 2.0 * i / last - 1.0 for i, word in enumerate(words)}

    return [
        spread(g) for g in (SIGNAL_WORDS, CONFIDENCE_WORDS, MOVE_WORDS, EXPOSURE_WORDS, PNL_WORDS, STEP_WORDS)
    ]


def _bucket(value: float, low: int, high: int) -> int:
    if not math.isfinite(value):
        return 0
    return int(min(high, max(low, round(value))))


def signal_word(signal: float) -> str:
    """``p4`` for +0.4, ``m2`` for -0.2 (tenths, clipped to [-1, 1])."""
    tenths = _bucket(signal * 10, -10, 10)
    return f"m{-tenths}" if tenths < 0 else f"p{tenths}"


def confidence_word(confidence: float) -> str:
    """``c7`` for confidence 0.7 (tenths, clipped to [0, 1])."""
    return f"c{_bucket(confidence * 10, 0, 10)}"


@dataclass(frozen=True)
class ModeratorState:
    """What the moderator sees at one step (the prompt's content)."""

    votes: tuple[tuple[str, float, float], ...]
    """(role, signal, confidence) in the council's role order."""
    price: float
    price_move: float
    """Close over the close ``MOVE_LOOKBACK`` sessions earlier, minus 1."""
    cash: float
    position: int
    starting_cash: float
    step: int
    total_steps: int

    @property
    def value(self) -> float:
        return self.cash + self.position * self.price

    @property
    def exposure(self) -> float:
        """Share of the portfolio value held in stock."""
        return self.position * self.price / self.value if self.value > 0 else 0.0

    @property
    def pnl(self) -> float:
        return self.value / self.starting_cash - 1.0


def vote_tuples(votes: Sequence[SpecialistVote]) -> tuple[tuple[str, float, float], ...]:
    """Votes as (role, signal, confidence) in the council's role order (missing roles abstain)."""
    by_role = {v.role: v for v in votes}
    return tuple(
        (role, float(by_role[role].signal), float(by_role[role].confidence))
        if role in by_role
        else (role, 0.0, 0.0)
        for role in ROLE_NAMES
    )


def price_move(closes: Sequence[float], lookback: int = MOVE_LOOKBACK) -> float:
    """Last close over the close ``lookback`` sessions earlier, minus 1 (0 without history)."""
    if len(closes) <= lookback or closes[-1 - lookback] <= 0:
        return 0.0
    return float(closes[-1]) / float(closes[-1 - lookback]) - 1.0


def prompt_words(state: ModeratorState) -> str:
    """The tiny model's prompt: bucket words separated by single spaces."""
    parts: list[str] = []
    for role, signal, confidence in state.votes:
        parts += [role, signal_word(signal), confidence_word(confidence)]
    parts += ["move", f"d{_bucket(state.price_move * 100, -5, 5):+d}"]
    parts += ["exposure", f"e{_bucket(state.exposure * QUARTERS, 0, QUARTERS)}"]
    parts += ["pnl", f"g{_bucket(state.pnl * 50, -5, 5):+d}"]
    step_tenth = _bucket(math.floor(10 * state.step / max(state.total_steps, 1)), 0, 9)
    parts += ["step", f"t{step_tenth}", "action"]
    return " ".join(parts)


COMPACT_FIELDS = {"move": "move", "exposure": "invested", "pnl": "pnl", "step": "step"}
"""The compact prompt's names of the portfolio fields (words a subword tokenizer reads whole)."""


def _signed_digit(tenths: int) -> str:
    return f"{'-' if tenths < 0 else '+'}{min(abs(tenths), 9)}"


def compact_prompt(words: str) -> str:
    """The word prompt (``prompt_words``) rewritten for a subword tokenizer in few tokens, every
    field a fixed count of them whatever its value: each vote ``+4 7`` (signal in tenths, sign
    and one digit, clipped to ±0.9; confidence in tenths, one digit, 10 read as 9) in the
    council's role order, then ``move +2 invested 3 pnl -1 step 4 action:``. Digits and signs
    are single tokens in SmolLM2's vocabulary, so every state's prompt has the same length
    (tested) and its nine answers are scored as one tree (``language_model.choices``), like the tiny model's.
    """
    tokens = words.split()
    parts = ["votes"]
    i = 0
    while i < len(tokens) and tokens[i] != "move":  # (role, signal, confidence) triples
        signal, confidence = tokens[i + 1], tokens[i + 2]
        tenths = -int(signal[1:]) if signal.startswith("m") else int(signal[1:])
        parts.append(f"{_signed_digit(tenths)} {min(int(confidence[1:]), 9)}")
        i += 3
    rest = dict(zip(tokens[i::2], tokens[i + 1 :: 2], strict=False))
    parts += ["move", _signed_digit(int(rest["move"][1:]))]
    parts += ["invested", rest["exposure"][1:]]
    parts += ["pnl", _signed_digit(int(rest["pnl"][1:]))]
    parts += ["step", rest["step"][1:], "action:"]
    return " ".join(parts)


def prompt_text(state: ModeratorState) -> str:
    """The same content in plain English, for a chat model's user message."""
    votes = "; ".join(
        f"{role} {signal + 0.0:+.1f} (confidence {conf:.1f})" for role, signal, conf in state.votes
    )
    return (
        f"Votes: {votes}. Price {state.price_move * 100:+.1f}% over "
        f"{MOVE_LOOKBACK} sessions. Invested {state.exposure * 100:.0f}% of the portfolio, "
        f"profit so far {state.pnl * 100:+.1f}%. Step {state.step + 1} of {state.total_steps}. "
        "Your trade:"
    )


def chat_messages(user_text: str) -> list[dict[str, str]]:
    """System and user messages (the user text from ``prompt_text``) for a chat model."""
    return [
        {"role": "system", "content": MODERATOR_TRAINING_SYSTEM},
        {"role": "user", "content": user_text},
    ]


def completion_for(side: str, quarters: int = 0) -> str:
    """The completion text of a side and a size in quarters (``hold`` is always ``hold q0``)."""
    if side == "hold" or quarters <= 0:
        return "hold q0"
    if side not in ("buy", "sell") or quarters > QUARTERS:
        raise ValueError(f"no completion for side {side!r} with {quarters} quarters")
    return f"{side} q{quarters}"


@dataclass(frozen=True)
class ParsedAction:
    """A completion turned into a feasible action; ``parsed`` is False for unusable text."""

    action: Action
    parsed: bool
    side: str
    quarters: int


def quarter_quantity(side: str, quarters: int, cash: float, position: int, price: float, cost: float) -> int:
    """Shares for ``quarters``/4 of the feasible maximum: buys round down (always affordable),
    sells round up (``sell q1`` of one share sells it)."""
    if side == "buy":
        return math.floor(max_affordable(cash, price, cost) * quarters / QUARTERS)
    if side == "sell":
        return math.ceil(max(position, 0) * quarters / QUARTERS)
    return 0


def parse_completion(
    text: str, cash: float, position: int, price: float, cost: float = 0.001
) -> ParsedAction:
    """The first ``side [qN]`` in ``text`` as a feasible action (hold when nothing is feasible).

    ``hold`` needs no size; ``buy``/``sell`` need ``q1``..``q4``. Anything else is
    unparsable: hold, with ``parsed=False`` so callers can count it.
    """
    match = _COMPLETION.search(text or "")
    if match is None:
        return ParsedAction(Action.hold(), False, "hold", 0)
    side = match.group(1).lower()
    if side == "hold":
        return ParsedAction(Action.hold(), True, "hold", 0)
    if match.group(2) is None or int(match.group(2)) == 0:
        return ParsedAction(Action.hold(), False, "hold", 0)
    quarters = int(match.group(2))
    qty = quarter_quantity(side, quarters, cash, position, price, cost)
    action = Action(side=side, quantity=qty) if qty > 0 else Action.hold()
    return ParsedAction(action, True, side, quarters)
