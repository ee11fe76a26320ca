"""Episodes and the reward (SPEC §1): every number finite and in range, checked at load."""

from __future__ import annotations

from pydantic import BaseModel, Field


class EnvSettings(BaseModel):
    """What an episode of the trading environment starts with, what a trade costs, and the
    weights of the reward's terms."""

    starting_cash: float = Field(default=10_000.0, gt=0, le=1e12)
    """Cash at the start of an episode (above 0, at most 10¹²)."""
    episode_months: int = Field(default=2, ge=1, le=120)
    """Months an episode spans from its start month (1 to 120)."""
    transaction_cost: float = Field(default=0.001, ge=0, lt=1)
    """Cost rate ``c`` of every trade: a buy costs quantity × close × (1 + c), a sell returns
    quantity × close × (1 − c) (at least 0, below 1)."""
    invalid_penalty: float = Field(default=0.01, ge=0)
    """Taken off the step's reward for an invalid action (a buy beyond cash, a sell beyond the
    position; at least 0)."""
    w_perf: float = Field(default=0.7, ge=0)
    """Weight of the reward's performance term (at least 0)."""
    w_infl: float = Field(default=0.3, ge=0)
    """Weight of the reward's inflation term (at least 0)."""
    annual_inflation: float = Field(default=0.05, gt=-1, le=10)
    """Yearly inflation of the reward's inflation term (above −1, at most 10)."""
    lookahead_k: int = Field(default=0, ge=0, le=10_000)
    """Sessions ahead that the optional lookahead term looks (0 disables it)."""
    lookahead_weight: float = Field(default=0.0, ge=0)
    """Weight of the optional lookahead term (0 disables it)."""
