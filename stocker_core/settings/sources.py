"""The settings of the built-in sources that have their own: the synthetic market
(``STOCKER_SOURCE=synthetic``: a seeded market with a planted signal) and Yahoo Finance at
universe size (batches within a request rate, docs/data-sources.md)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Self

from pydantic import BaseModel, Field, field_validator, model_validator

from stocker_core.settings.values import FIRST_MONTH, LAST_MONTH, MAX_SEED, is_ticker, spelt_as_iso

SYNTHETIC_PREFIX = "SYN"
SYNTH_MAX_TICKERS = 5000
"""The most tickers a synthetic count may name: SYN1 … SYN5000 (names and bars stay the
same as the count grows: ticker k draws from its own generator, seeded by (seed, k))."""
_TICKER_COUNT = re.compile(r"\s*([0-9]+)\s*")


def synthetic_ticker_names(value: str) -> list[str]:
    """``STOCKER_SYNTH_TICKERS`` as names: a count ``"4"`` (ASCII digits) gives SYN1 … SYN4;
    otherwise a comma-separated list of tickers (upper-cased, blanks dropped, duplicates kept
    once). ValueError saying what is expected otherwise."""
    expected = (
        f"expected a count from 1 to {SYNTH_MAX_TICKERS}, or tickers such as ALFA,BETA (A-Z, 0-9, . ^ = -)"
    )
    if _TICKER_COUNT.fullmatch(value):
        digits = value.strip().lstrip("0")
        if not digits or len(digits) > len(str(SYNTH_MAX_TICKERS)) or int(digits) > SYNTH_MAX_TICKERS:
            raise ValueError(expected)
        return [f"{SYNTHETIC_PREFIX}{i}" for i in range(1, int(digits) + 1)]
    names = [part.strip().upper() for part in value.split(",") if part.strip()]
    if not names or not all(is_ticker(name) for name in names):
        raise ValueError(expected)
    return list(dict.fromkeys(names))


DEFAULT_SYNTH_START = date(2021, 1, 1)
DEFAULT_SYNTH_END = date(2024, 1, 1)


def default_synth_start(years: float) -> date:
    """The first day of a synthetic market of ``years`` when STOCKER_SYNTH_START is unset:
    2021-01-01, or for a market longer than 3 years the day that makes it end on 2024-01-01
    (10 years: 2014-01-01), so ``STOCKER_SYNTH_YEARS=10`` is a past decade, not one that runs
    past the exchange calendar. Up to 3 years the market is the one it always was."""
    months = max(1, round(12 * years))
    start = DEFAULT_SYNTH_END.year * 12 + DEFAULT_SYNTH_END.month - 1 - months
    return min(DEFAULT_SYNTH_START, date(start // 12, start % 12 + 1, 1))


class SyntheticMarketSettings(BaseModel):
    """The synthetic market (``STOCKER_SOURCE=synthetic``): a seeded market with a planted signal."""

    synth_ic: float = Field(
        default=0.1, ge=-1.0, le=1.0, description="Information coefficient of the planted news factor"
    )
    synth_seed: int = Field(
        default=7,
        ge=0,
        le=MAX_SEED,
        description="Seed (0 to 2³²−1): the same seed gives the same bars and text",
    )
    synth_tickers: str = Field(
        default="4",
        description="A count (4: SYN1 … SYN4, 1 to 5000; the first N names and their bars are those "
        "of any larger count) or names (ALFA,BETA); the default universe on "
        "this source",
    )
    synth_years: float = Field(
        default=3.0,
        gt=0,
        le=40,
        description="Years of sessions to make (whole months; the span must end within the exchange "
        "calendar, a year past today)",
    )
    synth_start: date = Field(
        default=DEFAULT_SYNTH_START,
        description="First calendar day of the market (unset: 2021-01-01, or for more than 3 years the "
        "day that ends it on 2024-01-01, e.g. 2014-01-01 for 10 years; the first month partition "
        "follows it unless STOCKER_START_MONTH is set)",
    )
    synth_persistence: float = Field(
        default=0.8,
        ge=0.0,
        lt=1.0,
        description="AR(1) coefficient of the planted factor (0: independent days)",
    )

    @field_validator("synth_start", mode="before")
    @classmethod
    def _synthetic_start_spelling(cls, value: Any) -> Any:
        """A day is spelt in ISO 8601 (``2021-01-01``), never a number of seconds."""
        return spelt_as_iso(value, "expected a day, YYYY-MM-DD")

    @field_validator("synth_start", mode="after")
    @classmethod
    def _synthetic_start_in_range(cls, value: date) -> date:
        if not FIRST_MONTH <= value <= LAST_MONTH.replace(day=31):
            raise ValueError(f"expected a day from {FIRST_MONTH} to {LAST_MONTH:%Y-%m}-31")
        return value

    @field_validator("synth_tickers", mode="after")
    @classmethod
    def _synthetic_names(cls, value: str) -> str:
        synthetic_ticker_names(value)
        return value

    @model_validator(mode="after")
    def _synthetic_start(self) -> Self:
        """A synthetic market longer than 3 years without STOCKER_SYNTH_START ends on
        2024-01-01 (``default_synth_start``) rather than years past today."""
        if "synth_start" not in self.model_fields_set:
            self.synth_start = default_synth_start(float(self.synth_years))
        return self

    @property
    def synthetic_tickers(self) -> list[str]:
        """The synthetic market's tickers: ``synth_tickers`` as names (``synthetic_ticker_names``)."""
        return synthetic_ticker_names(self.synth_tickers)


class YfinanceSettings(BaseModel):
    """The yfinance source at universe size: batches within a request rate."""

    yfinance_batch_size: int = Field(
        default=50,
        ge=1,
        le=500,
        description="Tickers a Yahoo Finance request asks for at once (a universe is fetched in batches)",
    )
    yfinance_requests_per_minute: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Most Yahoo Finance requests a minute, retries included (rate limits and timeouts "
        "are retried with jittered exponential backoff)",
    )
