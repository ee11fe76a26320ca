"""The forward ledger (docs/forward-ledger.md): the policies it records."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LedgerSettings(BaseModel):
    """What the forward ledger records (its replays run under the market's ``clock``)."""

    ledger_policies: list[str] = Field(
        default_factory=lambda: ["buy_and_hold", "council", "moderator_grpo", "agent_rl"],
        description="Policies `stocker ledger record` and the ledger asset record (buy_and_hold always)",
    )
