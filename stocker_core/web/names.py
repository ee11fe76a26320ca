"""Validation of the names a web request carries, before they reach SQL, paths or models."""

from __future__ import annotations

import re
from datetime import date

from stocker_core.env.tasks import resolve_episode_key
from stocker_core.errors import InvalidNameError
from stocker_core.market.validation import parse_partition_key, validate_day, validate_ticker
from stocker_core.web.errors import BadInputError

DATE_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
PLAIN_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def episode_key(name: str) -> tuple[str, str | None]:
    """(partition key, task id or None) of a task alias or a ``TICKER|YYYY-MM-01`` key."""
    try:
        key, task_id = resolve_episode_key(name)
        parse_partition_key(key)
    except InvalidNameError as exc:
        raise BadInputError(str(exc)) from None
    return key, task_id


def ticker(name: str) -> str:
    """An exchange symbol (``AAPL``, ``^GSPC``); BadInputError otherwise."""
    try:
        return validate_ticker(name)
    except InvalidNameError as exc:
        raise BadInputError(str(exc)) from None


def day(text: str) -> date:
    """A ``YYYY-MM-DD`` date within the supported days (``market.validation.validate_day``:
    9999-12-31 or 0001-01-01 are a 400, not an overflow); BadInputError otherwise."""
    if not isinstance(text, str) or not DATE_PATTERN.fullmatch(text):
        raise BadInputError(f"invalid date {text!r}: expected YYYY-MM-DD, e.g. 2023-08-15")
    try:
        return validate_day(text)
    except InvalidNameError as exc:
        raise BadInputError(str(exc)) from None


def policy(name: str) -> str:
    """A policy of the registry (``stocker_core.env.policies``); BadInputError listing them otherwise."""
    from stocker_core.env.policies import policy_names

    known = policy_names()
    if name not in known:
        raise BadInputError(f"unknown policy {name!r}: use one of {', '.join(known)}")
    return name


def run_id(text: str) -> str:
    """A ``models.runs`` run id (letters, digits, ``_ . : -``)."""
    if not isinstance(text, str) or not RUN_ID_PATTERN.fullmatch(text):
        raise BadInputError(f"invalid run id {text!r}: letters, digits and _ . : - only")
    return text


def plain_name(text: str, what: str) -> str:
    """A short name of letters, digits and ``_ . -`` (a backend, a model id, a report)."""
    if not isinstance(text, str) or not PLAIN_NAME.fullmatch(text) or text.startswith("."):
        raise BadInputError(f"invalid {what} {text!r}: 1-64 letters, digits or _ . -")
    return text
