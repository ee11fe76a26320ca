"""The agent's prompt mask: the ticker as a label, dates as sessions, prices rebased
(``stocker_core.text.masking``), built from the agent's own bars."""

from __future__ import annotations

import pandas as pd

from stocker_core.agent.data import MACRO_SYMBOLS, AgentData
from stocker_core.text.masking import PromptMask


def agent_mask(data: AgentData, day: str | pd.Timestamp) -> PromptMask:
    """The mask of ``data.ticker``'s decision on ``day``: prices rebased to 100 at the first
    session of the day's month, as the council's (``council.roles.prompt_mask``)."""
    when = pd.Timestamp(day).normalize()
    bars = data.bars.loc[pd.to_datetime(data.bars["date"]) <= when]
    return PromptMask.build(
        data.ticker,
        when,
        bars["date"],
        bars["close"].to_numpy(float),
        when.replace(day=1),
        others=tuple(MACRO_SYMBOLS),
    )
