"""The return over the next ``horizon`` sessions: what both learners' rewards look ahead at
(the agent's result score, the moderator's excess reward and the market's move it removes)."""

from __future__ import annotations

from collections.abc import Sequence

MAX_HORIZON = 60
"""The longest horizon, in sessions (about three months of trading days). One range for both
learners: the agent's config and command line already took 1-60, the moderator's 1-20 was a
narrower cut of the same quantity. Beyond a quarter a daily decision's reward is mostly the
drift and the shocks of sessions its inputs never saw."""


def check_horizon(horizon: int) -> int:
    """``horizon`` when it is 1..``MAX_HORIZON`` sessions, else ValueError."""
    if not 1 <= horizon <= MAX_HORIZON:
        raise ValueError(f"horizon must be 1 to {MAX_HORIZON} sessions, got {horizon!r}")
    return horizon


def forward_return(closes: Sequence[float], start: int, horizon: int) -> float | None:
    """``closes[start + horizon] / closes[start] - 1``: the close-to-close return over the
    ``horizon`` sessions after ``start`` (None when the closes end before that)."""
    check_horizon(horizon)
    if start + horizon >= len(closes):
        return None
    return float(closes[start + horizon] / closes[start] - 1.0)
