"""Validation of user-supplied names before they reach SQL, paths or Dagster."""

from __future__ import annotations

import re
from datetime import date

from stocker_core.errors import InvalidNameError
from stocker_core.settings.values import FIRST_MONTH, LAST_MONTH, TICKER_WORDS, is_ticker
from stocker_core.settings.values import (
    TICKER_PATTERN as TICKER_PATTERN,  # the one rule, on the settings' floor
)

MONTH_PATTERN = re.compile(r"^\d{4}-\d{2}-01$")
DAY_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def validate_ticker(ticker: str) -> str:
    """Return ``ticker`` if it is a plausible exchange symbol, else raise InvalidNameError.

    Allowed: upper-case letters, digits and ``. ^ = -`` (``BRK.B``, ``^GSPC``, ``GC=F``),
    1-15 characters. Lower-case, path-like (``../etc``) or SQL-like (``A;DROP``) names fail.
    """
    if not is_ticker(ticker):
        raise InvalidNameError(f"invalid ticker {ticker!r}: use {TICKER_WORDS}")
    return ticker


def validate_month(month: str) -> date:
    """Parse a month partition value ``YYYY-MM-01`` into a date."""
    if not isinstance(month, str) or not MONTH_PATTERN.fullmatch(month):
        raise InvalidNameError(f"invalid month {month!r}: expected YYYY-MM-01, e.g. 2023-08-01")
    try:
        parsed = date.fromisoformat(month)
    except ValueError as exc:
        raise InvalidNameError(f"invalid month {month!r}: {exc}") from None
    if not FIRST_MONTH <= parsed <= LAST_MONTH:
        raise InvalidNameError(
            f"invalid month {month!r}: months from {FIRST_MONTH:%Y-%m} to {LAST_MONTH:%Y-%m} are supported"
        )
    return parsed


FIRST_DAY, LAST_DAY = FIRST_MONTH, date(2200, 12, 31)
"""The days a request may name (a chart's day, a council day, a ledger session): those of the
supported months. A day outside is refused as bad input before any date arithmetic (a day
one week past 9999-12-31 overflows ``datetime.date``)."""


def validate_day(day: date | str) -> date:
    """``day`` (a date, or ``YYYY-MM-DD``) when it lies within ``FIRST_DAY`` … ``LAST_DAY``;
    InvalidNameError saying what is expected otherwise."""
    if isinstance(day, str):
        text = day.strip()
        if not DAY_PATTERN.fullmatch(text):
            raise InvalidNameError(f"invalid date {day!r}: expected YYYY-MM-DD, e.g. 2023-08-15")
        try:
            day = date.fromisoformat(text)
        except ValueError as exc:
            raise InvalidNameError(f"invalid date {text!r}: {exc}") from None
    if not isinstance(day, date):
        raise InvalidNameError(f"invalid date {day!r}: expected YYYY-MM-DD, e.g. 2023-08-15")
    if not FIRST_DAY <= day <= LAST_DAY:
        raise InvalidNameError(
            f"date {day.isoformat()} is out of range: days from {FIRST_DAY} to {LAST_DAY} are supported"
        )
    return day


def parse_partition_key(key: str) -> tuple[str, date]:
    """Split a ticker × month key like ``AAPL|2023-08-01`` into (ticker, month start)."""
    if not isinstance(key, str) or key.count("|") != 1:
        raise InvalidNameError(
            f"invalid partition key {key!r}: expected TICKER|YYYY-MM-01, e.g. AAPL|2023-08-01"
        )
    ticker, month = key.split("|")
    return validate_ticker(ticker), validate_month(month)


def partition_key(ticker: str, month: date) -> str:
    """The ticker × month key for a ticker and any date in the month."""
    return f"{validate_ticker(ticker)}|{month.replace(day=1).isoformat()}"
