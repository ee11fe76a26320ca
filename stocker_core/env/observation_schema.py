"""The observation's fields, declared once.

``ObservationFields`` lists what the agent sees of the portfolio before acting at ``step``;
the core environment's ``Observation`` (``environment.py``) adds the price history as an
array, and the server's wire model (``api_models.ObservationModel``) takes these fields from
here and adds the council inputs, so the two cannot drift. Light on purpose (no numpy, no
pydantic): the clients import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ObservationFields:
    """What the agent sees of the portfolio before acting at ``step`` (or after the last step
    when done)."""

    ticker: str
    date: str
    close: float
    step: int
    total_steps: int
    cash: float
    position: int
    portfolio_value: float
    done: bool


@dataclass(frozen=True)
class Observation(ObservationFields):
    """What the agent sees before acting at ``step`` (or after the last step when done)."""

    price_history: np.ndarray
    """Closes dated on or before ``date`` (history before the window, then the window)."""

    def to_dict(self, history: bool = True) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "price_history"}
        data["price_history"] = self.price_history.tolist() if history else None
        return data
