"""How often a council run fell back to a default instead of a model's answer.

A specialist vote falls back to neutral when its model call failed (network, deadline,
HTTP error: ``call_failures``) or its reply could not be parsed (``parse_errors``); the
moderator falls back to hold the same two ways (also counted in ``moderator_fallbacks``).
``CouncilTally`` (kept by ``CouncilPolicy.tally``) counts them over an episode so
``stocker episode run`` can report them instead of silently holding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stocker_core.council.models import CouncilDecision

FAILED_CALL_PREFIXES = ("model call failed", "backend error", "hold: moderator call failed")
"""Rationale openings of the defaults ``LLMBackend``, ``run_votes`` and ``LLMModerator`` give
a failed call (as opposed to an unparsable reply)."""


@dataclass
class CouncilTally:
    """Fallback counts over the decisions of a run."""

    days: int = 0
    votes: int = 0
    call_failures: int = 0
    parse_errors: int = 0
    moderator_fallbacks: int = 0
    fallback_days: int = 0
    first_problem: str | None = None

    @property
    def fallbacks(self) -> int:
        """Votes and moderator decisions that fell back to a default."""
        return self.call_failures + self.parse_errors

    def add(self, decision: CouncilDecision) -> None:
        """Count one day's decision."""
        self.days += 1
        before = self.fallbacks
        problems = [(v.role, v.rationale) for v in decision.votes if v.parse_error]
        self.votes += len(decision.votes)
        if decision.parse_error:
            self.moderator_fallbacks += 1
            problems.append(("moderator", decision.rationale))
        for who, rationale in problems:
            if rationale.startswith(FAILED_CALL_PREFIXES):
                self.call_failures += 1
            else:
                self.parse_errors += 1
            self.first_problem = self.first_problem or f"{who}: {rationale[:200]}"
        self.fallback_days += int(self.fallbacks > before)

    def as_dict(self) -> dict[str, Any]:
        """The counts, JSON-ready."""
        return {
            "days": self.days,
            "votes": self.votes,
            "parse_errors": self.parse_errors,
            "call_failures": self.call_failures,
            "fallbacks": self.fallbacks,
            "moderator_fallbacks": self.moderator_fallbacks,
            "fallback_days": self.fallback_days,
            "first_problem": self.first_problem,
        }

    def warning(self) -> str | None:
        """A one-paragraph warning when anything fell back, else None."""
        if not self.fallbacks:
            return None
        return (
            f"the council fell back to defaults on {self.fallback_days} of {self.days} days: "
            f"{self.call_failures} model calls failed and {self.parse_errors} replies could not be "
            f"parsed ({self.votes} votes; {self.moderator_fallbacks} moderator decisions became hold). "
            f"First: {self.first_problem}. Check the endpoint and the model (STOCKER_OPENAI_BASE_URL, "
            "STOCKER_OPENAI_MODEL, STOCKER_LLM_TIMEOUT_S) or use STOCKER_COUNCIL_BACKEND=rule."
        )
