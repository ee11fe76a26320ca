"""What the council produces: one vote per specialist, one decision per day."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from stocker_core.env.actions import Action

__all__ = ["Action", "CouncilDecision", "SpecialistVote"]

Side = Literal["buy", "sell", "hold"]


def _finite(value: float, low: float, high: float) -> float:
    value = float(value)
    if math.isnan(value):
        return 0.0
    return min(high, max(low, value))


class SpecialistVote(BaseModel):
    """A specialist's view: ``signal`` in [-1, 1] (sell..buy), ``confidence`` in [0, 1]."""

    role: str
    signal: float = Field(ge=-1.0, le=1.0)
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str = ""
    parse_error: bool = False

    @field_validator("signal", mode="before")
    @classmethod
    def _clip_signal(cls, value: float) -> float:
        return _finite(value, -1.0, 1.0)

    @field_validator("confidence", mode="before")
    @classmethod
    def _clip_confidence(cls, value: float) -> float:
        return _finite(value, 0.0, 1.0)

    @classmethod
    def neutral(cls, role: str, rationale: str, parse_error: bool = False) -> SpecialistVote:
        """Signal 0, confidence 0 (missing data or an unusable reply)."""
        return cls(role=role, signal=0.0, confidence=0.0, rationale=rationale, parse_error=parse_error)


class CouncilDecision(BaseModel):
    """The seven votes, the moderator's action and why."""

    votes: list[SpecialistVote]
    action: Action
    rationale: str = ""
    parse_error: bool = False
