"""The trading action: ``{"side": "buy" | "sell" | "hold", "quantity": int >= 0}``."""

from __future__ import annotations

import math
from enum import IntEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_QUANTITY = 10**9
"""Largest share count an action may name (anything bigger is a client error)."""


class Side(IntEnum):
    """Integer codes used by the vectorized grader and the saved trajectories."""

    HOLD = 0
    BUY = 1
    SELL = 2


SIDE_NAMES = {Side.HOLD: "hold", Side.BUY: "buy", Side.SELL: "sell"}
SIDE_CODES = {name: code for code, name in SIDE_NAMES.items()}


class Action(BaseModel):
    """One step's trade. ``hold`` ignores the quantity."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    side: Literal["buy", "sell", "hold"] = Field(description="buy, sell or hold")
    quantity: int = Field(default=0, ge=0, le=MAX_QUANTITY, description="whole shares, 0 <= quantity <= 1e9")

    @field_validator("side", mode="before")
    @classmethod
    def _side(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().lower()
            if value not in SIDE_CODES:
                raise ValueError(f"unknown side {value!r}: use buy, sell or hold")
        return value

    @field_validator("quantity", mode="before")
    @classmethod
    def _quantity(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("quantity must be a whole number of shares, not a boolean")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError("quantity must be a finite whole number of shares")
            if value != int(value):
                raise ValueError(f"quantity must be a whole number of shares, got {value}")
            value = int(value)
        return value

    @property
    def code(self) -> Side:
        """The integer side code."""
        return Side(SIDE_CODES[self.side])

    @classmethod
    def hold(cls) -> Action:
        return cls(side="hold", quantity=0)

    @classmethod
    def buy(cls, quantity: int) -> Action:
        return cls(side="buy", quantity=quantity)

    @classmethod
    def sell(cls, quantity: int) -> Action:
        return cls(side="sell", quantity=quantity)


def parse_action(value: Action | dict[str, Any] | str) -> Action:
    """An Action from a model, a dict or a JSON string (raises pydantic.ValidationError)."""
    if isinstance(value, Action):
        return value
    if isinstance(value, str):
        return Action.model_validate_json(value)
    return Action.model_validate(value)
