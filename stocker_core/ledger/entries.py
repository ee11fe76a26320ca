"""Ledger entries and their hash chain.

An entry is one policy's decision for one ticker, taken at the close of ``decided_on`` for the
next session ``for_session``: the exposure it holds over that session, what the decision cost,
the model version and a hash of the inputs it saw, when it was recorded and whether under the
wall clock (``live``) or a simulated one (``replayed``). Each entry carries the sha256 of the
previous entry (``prev_hash``) and of its own content with that link (``hash``), so editing,
reordering or deleting any stored entry breaks the chain from there on.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

import pandas as pd

GENESIS = "0" * 64
"""``prev_hash`` of the first entry."""

Mode = Literal["live", "replayed"]
MODES: tuple[Mode, ...] = ("live", "replayed")
BENCHMARK = "buy_and_hold"
"""Always recorded: the forward record's excess is measured against it."""
ENTRY_FIELDS_IN_SCORES = (
    "ticker",
    "policy",
    "mode",
    "decided_on",
    "for_session",
    "target_exposure",
    "cost_fraction",
    "decision_close",
)
"""The entry's fields a score row repeats (checked against the chain by the reader)."""


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded decision (see the module docstring); ``hash`` seals every other field."""

    seq: int
    """Position in the chain, from 1."""
    ticker: str
    policy: str
    decided_on: str
    """ISO date of the session at whose close the decision is taken."""
    for_session: str
    """ISO date of the next session: the one whose close scores the decision."""
    target_exposure: float
    """Share of the account in the stock after the trade at ``decided_on``'s close (0 … 1)."""
    shares: int
    """Whole shares held after that trade (a 10,000 paper account from the ledger's first day)."""
    decision_close: float
    """``decided_on``'s close: the price the trade is filled at."""
    cost_fraction: float
    """Transaction cost of that trade as a share of the account before it."""
    model_version: str
    """The policy's weights hash (``rules`` for code-only policies; vote versions for the council)."""
    inputs_hash: str
    """sha256 of what the decision saw (the ticker's bars up to ``decided_on``, the replay's start)."""
    recorded_at: str
    """ISO instant (UTC) the entry was recorded: the wall clock, or ``STOCKER_CLOCK`` when replayed."""
    mode: Mode
    source: str
    """The market source the bars came from."""
    prev_hash: str
    hash: str

    def content(self) -> dict[str, Any]:
        """Every field but ``hash``: what the hash seals."""
        data = asdict(self)
        data.pop("hash")
        return data

    def describe(self) -> str:
        """``#12 GOOGL council for 2016-03-02``: how messages name an entry."""
        return f"#{self.seq} {self.ticker} {self.policy} for {self.for_session}"


ENTRY_COLUMNS = tuple(f.name for f in fields(LedgerEntry))


def content_hash(content: dict[str, Any]) -> str:
    """sha256 of an entry's content as canonical JSON (keys sorted, floats as Python's repr)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def seal(content: dict[str, Any]) -> LedgerEntry:
    """The entry of ``content`` (every field but ``hash``) with its hash."""
    return LedgerEntry(**content, hash=content_hash(content))


def chain(drafts: Sequence[dict[str, Any]], first_seq: int, prev_hash: str) -> list[LedgerEntry]:
    """Number and link ``drafts`` (entry fields without ``seq``, ``prev_hash``, ``hash``) after
    an entry numbered ``first_seq - 1`` whose hash is ``prev_hash``."""
    entries: list[LedgerEntry] = []
    for offset, draft in enumerate(drafts):
        entry = seal({**draft, "seq": first_seq + offset, "prev_hash": prev_hash})
        entries.append(entry)
        prev_hash = entry.hash
    return entries


INT_FIELDS = ("seq", "shares")
FLOAT_FIELDS = ("target_exposure", "decision_close", "cost_fraction")


def _checked(value: Any, column: str) -> Any:
    """``value`` exactly as stored when its type is the one the ledger writes for ``column``;
    ValueError naming the column otherwise (nothing is converted: what is hashed is what is
    stored)."""
    if value is None:
        raise ValueError(f"{column} is null (the ledger always writes a value)")
    if column in INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{column} must be a whole number, got {value!r}")
        return value
    if column in FLOAT_FIELDS:
        if not isinstance(value, float):
            raise ValueError(
                f"{column} must be a number with a fraction as the ledger writes it, got {value!r}"
            )
        if not math.isfinite(value):
            raise ValueError(f"{column} must be finite, got {value!r}")
        if column == "decision_close" and value <= 0:
            raise ValueError(f"decision_close must be a positive price, got {value!r}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{column} must be text, got {value!r}")
    if column == "mode" and value not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {value!r}")
    return value


def entry_from_mapping(data: Any) -> LedgerEntry:
    """The entry of one stored row or JSON object, every field checked for the type the ledger
    writes and none converted; ValueError naming the first problem (a missing, unknown or
    mistyped field)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected an object with the entry's fields, got {type(data).__name__}")
    missing = [c for c in ENTRY_COLUMNS if c not in data]
    if missing:
        raise ValueError(f"field {missing[0]} is missing")
    unknown = sorted(k for k in data if k not in ENTRY_COLUMNS)
    if unknown:
        raise ValueError(f"field {unknown[0]!r} is not one the ledger writes (it would not be hashed)")
    return LedgerEntry(**{c: _checked(data[c], c) for c in ENTRY_COLUMNS})


def entries_frame(entries: Iterable[LedgerEntry]) -> pd.DataFrame:
    """The entries as a frame with the stored columns (empty with the columns when none)."""
    rows = [asdict(e) for e in entries]
    frame = pd.DataFrame(rows, columns=list(ENTRY_COLUMNS))
    return frame.astype({"seq": "int64", "shares": "int64"}) if rows else frame


def to_jsonl(entries: Iterable[LedgerEntry]) -> str:
    """JSON Lines: one entry per line, keys sorted, exactly the hashed values."""
    return "".join(json.dumps(asdict(e), sort_keys=True) + "\n" for e in entries)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"field {key!r} appears twice")
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number the ledger writes")


def json_object(text: str) -> Any:
    """``text`` as JSON, read strictly: a duplicated key, ``NaN`` or ``Infinity`` is a ValueError."""
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)


def from_jsonl(text: str, where: str = "JSON Lines") -> list[LedgerEntry]:
    """Entries of a JSON Lines export, each value exactly as written (no field converted, a
    duplicated key, ``NaN`` or a mistyped value refused); ValueError naming the line otherwise."""
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(entry_from_mapping(json_object(line)))
        except (ValueError, RecursionError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"{where}:{number}: not a ledger entry ({reason})") from None
    return entries
