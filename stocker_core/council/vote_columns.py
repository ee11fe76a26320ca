"""One role's rule votes over many days as columns (``RoleVotes``), with the clipping and
rounding every rule vote gets (4 decimals, as ``SpecialistVote`` rows are stored)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from stocker_core.council.models import SpecialistVote


def clip(x: float, low: float = -1.0, high: float = 1.0) -> float:
    """``x`` clipped to [low, high]; 0 when it is not finite."""
    return float(min(high, max(low, x))) if math.isfinite(x) else 0.0


def abstain_text(what: str) -> str:
    """The rationale of an analyst that has no data (signal 0, confidence 0)."""
    return f"no data: {what}; abstaining (signal 0, confidence 0)"


@dataclass
class RoleVotes:
    """A role's votes, one entry per day of a ``DayGrid`` (in its order)."""

    role: str
    signal: list[float] = field(default_factory=list)
    confidence: list[float] = field(default_factory=list)
    rationale: list[str] = field(default_factory=list)

    def add(self, signal: float, confidence: float, rationale: str) -> None:
        """Append a vote (signal and confidence rounded to 4 decimals)."""
        self.signal.append(round(float(signal), 4))
        self.confidence.append(round(float(confidence), 4))
        self.rationale.append(rationale)

    def abstain(self, what: str) -> None:
        """Append the vote of a day without data: signal 0, confidence 0, saying what is missing."""
        self.signal.append(0.0)
        self.confidence.append(0.0)
        self.rationale.append(abstain_text(what))

    def append_vote(self, vote: SpecialistVote) -> None:
        """Append a vote computed elsewhere (a specialist without an array rule)."""
        self.signal.append(vote.signal)
        self.confidence.append(vote.confidence)
        self.rationale.append(vote.rationale)

    def vote(self, i: int) -> SpecialistVote:
        """Day ``i``'s vote as a ``SpecialistVote``."""
        return SpecialistVote(
            role=self.role, signal=self.signal[i], confidence=self.confidence[i], rationale=self.rationale[i]
        )
