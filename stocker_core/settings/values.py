"""How a setting's value is spelt: tickers, months, days, seeds and folders; shared by the
settings' validators and the code that checks the same values elsewhere (``market.validation``,
the CLI's options)."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationInfo

TICKER_PATTERN = re.compile(r"^[A-Z0-9][A-Z0-9.^=-]{0,14}$|^\^[A-Z0-9.=-]{1,14}$")
"""An exchange symbol: 1-15 upper-case ASCII letters, digits and ``. ^ = -`` (``BRK.B``,
``^GSPC``, ``GC=F``); ``market.validation.validate_ticker`` also refuses ``..``."""
TICKER_WORDS = "1-15 upper-case letters, digits or . ^ = - (e.g. AAPL, BRK.B, ^GSPC, GC=F)"


def is_ticker(value: object) -> bool:
    """Whether ``value`` is a plausible exchange symbol (``TICKER_PATTERN``, no ``..``)."""
    return isinstance(value, str) and TICKER_PATTERN.fullmatch(value) is not None and ".." not in value


FIRST_MONTH = date(1800, 1, 1)
LAST_MONTH = date(2200, 12, 1)
"""The months a month setting, a partition or an episode key may name: market calendars and
pandas timestamps (1677-2262) end well inside 0001 … 9999, so a far year is refused where it
is read, not deep in a run."""
_MONTH_SPELLING = re.compile(r"[0-9]{4}-[0-9]{2}(-[0-9]{2})?")
"""``YYYY-MM`` or ``YYYY-MM-DD``, ASCII digits only (``strptime`` alone takes ``2016-1``
and other scripts' digits)."""


def parse_month_setting(value: str) -> date:
    """The first day of the month ``value`` names (``YYYY-MM`` or a day ``YYYY-MM-DD``, from
    1800-01 to 2200-12, as partition keys); ValueError saying what is expected otherwise."""
    value = value.strip()
    try:
        if not _MONTH_SPELLING.fullmatch(value):
            raise ValueError(value)
        month = datetime.strptime(value, "%Y-%m-%d" if len(value) > 7 else "%Y-%m").date().replace(day=1)
    except ValueError:
        raise ValueError("expected a month, YYYY-MM (or a day, YYYY-MM-DD)") from None
    if not FIRST_MONTH <= month <= LAST_MONTH:
        raise ValueError(f"expected a month from {FIRST_MONTH:%Y-%m} to {LAST_MONTH:%Y-%m}")
    return month


_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
"""How a day setting or a timestamp setting begins (pydantic alone also takes a Unix time, ``0``)."""


def spelt_as_iso(value: Any, expected: str) -> Any:
    """``value`` unchanged when it is not a string or begins as an ISO 8601 day
    (``2021-01-01``); ValueError saying ``expected`` when it is a number of seconds or other
    text."""
    if isinstance(value, str) and not _ISO_DAY.match(value.strip()):
        raise ValueError(expected)
    return value


MAX_SEED = 2**32 - 1
"""The largest seed a setting or option takes (what every generator the project seeds accepts)."""


def blank_folder_is_unset(model: type, value: Any, info: ValidationInfo) -> Any:
    """A blank folder variable (``STOCKER_FILES_DIR=``) means unset (the field's default), not
    the working folder."""
    if isinstance(value, str) and not value.strip():
        return model.model_fields[info.field_name].get_default(call_default_factory=True)  # type: ignore[attr-defined]
    return value


def absolute_folder(value: Path | None) -> Path | None:
    """A folder setting as an absolute path (``~`` expanded; a relative one from the working
    folder)."""
    return value.expanduser().resolve() if value is not None else None
