"""The agent's prompt mask: the ticker as a label, dates as sessions, prices rebased
(``stocker_core.text_events.masking``), built from the agent's own bars."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stocker_core.agent.data import MACRO_SYMBOLS, AgentData
from stocker_core.text_events.masking import PromptMask


def agent_mask(data: AgentData, day: str | pd.Timestamp) -> PromptMask:
    """The mask of ``data.ticker``'s decision on ``day``: prices rebased to 100 at the first
    session of the day's month, as the council's (``council.roles.prompt_mask``)."""
    when = pd.Timestamp(day).normalize()
    sessions, closes = _sessions(data)
    known = int(sessions.searchsorted(when, side="right"))
    return PromptMask.build(
        data.ticker,
        when,
        sessions[:known],
        closes[:known],
        when.replace(day=1),
        others=tuple(MACRO_SYMBOLS),
    )


_SESSIONS: dict[int, tuple[AgentData, pd.DatetimeIndex, np.ndarray]] = {}


def _sessions(data: AgentData) -> tuple[pd.DatetimeIndex, np.ndarray]:
    """The bars' sorted days and closes, converted once per AgentData (a mask is built per decision)."""
    cached = _SESSIONS.get(id(data))
    if cached is None or cached[0] is not data:
        bars = data.bars.sort_values("date")
        days = pd.DatetimeIndex(pd.to_datetime(bars["date"])).normalize()
        cached = _SESSIONS[id(data)] = (data, days, bars["close"].to_numpy(float))
    return cached[1], cached[2]
