"""The corrections file: explicit, reasoned fixes to source bars (``$STOCKER_HOME/corrections.csv``).

One row per fix, columns ``ticker,date,column,value,reason`` (a reason is required):

- ``column`` a price column (open, high, low, close, adj_close, volume): use ``value``
  for that day (fixes a typo'd or non-numeric value);
- ``column`` ``row`` and ``value`` ``drop``: remove that day's bars (duplicates, a
  session off the exchange calendar);
- ``column`` ``row`` and ``value`` ``accept``: keep the day as it is although it breaks a
  rule (e.g. a real one-day crash beyond the split-like jump threshold).

Every applied correction is listed in the check's metadata; nothing is fixed silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from stocker_core.errors import StockerError
from stocker_core.market.frames import PRICE_COLUMNS, BarIssue
from stocker_core.market.validation import validate_ticker

COLUMNS = ["ticker", "date", "column", "value", "reason"]
ROW_ACTIONS = {"drop", "accept"}


SAMPLE_SOURCE_ACCEPTED = [
    ("AAPL", "2000-09-29", "real move: -52% after Apple's profit warning of 2000-09-28"),
]
"""Vetted real moves in the offline sample data that break the split-like jump rule."""


class CorrectionsError(StockerError, ValueError):
    """The corrections file is malformed."""


@dataclass(frozen=True)
class Correction:
    """One reasoned fix to one day of one symbol."""

    ticker: str
    date: pd.Timestamp
    column: str
    value: str
    reason: str

    def describe(self) -> str:
        what = f"{self.value} the row" if self.column == "row" else f"{self.column} := {self.value}"
        return f"{self.date:%Y-%m-%d} {what} ({self.reason})"


@dataclass
class Corrected:
    """Bars after corrections, the issues still open and what was applied."""

    frame: pd.DataFrame
    issues: list[BarIssue]
    accepted_days: set[pd.Timestamp] = field(default_factory=set)
    applied: list[str] = field(default_factory=list)


def _parse_row(number: int, row: dict[str, str], path: Path) -> Correction:
    where = f"{path}:{number}"
    try:
        ticker = validate_ticker(row["ticker"].strip())
        day = pd.Timestamp(row["date"].strip()).normalize()
    except (ValueError, TypeError) as exc:
        raise CorrectionsError(f"{where}: {exc}") from None
    column, value, reason = row["column"].strip().lower(), row["value"].strip(), row["reason"].strip()
    if not reason:
        raise CorrectionsError(f"{where}: a reason is required")
    if column == "row":
        if value.lower() not in ROW_ACTIONS:
            raise CorrectionsError(f"{where}: a row correction's value is drop or accept, not {value!r}")
        value = value.lower()
    elif column in PRICE_COLUMNS:
        try:
            float(value)
        except ValueError:
            raise CorrectionsError(f"{where}: {column} needs a number, not {value!r}") from None
    else:
        raise CorrectionsError(f"{where}: unknown column {column!r}: use row or {', '.join(PRICE_COLUMNS)}")
    return Correction(ticker, day, column, value, reason)


def load_corrections(path: Path) -> list[Correction]:
    """Corrections in ``path`` (none when the file does not exist); CorrectionsError if malformed."""
    if not path.is_file():
        return []
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, OSError) as exc:
        raise CorrectionsError(f"cannot read corrections file {path}: {exc}") from None
    if table.empty and not len(table.columns):
        return []
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise CorrectionsError(
            f"{path}: missing column(s) {', '.join(missing)}; header is {','.join(COLUMNS)}"
        )
    return [_parse_row(i + 2, row, path) for i, row in enumerate(table[COLUMNS].to_dict("records"))]


def sample_source_corrections() -> list[Correction]:
    """The sample source's vetted acceptances (``SAMPLE_SOURCE_ACCEPTED``)."""
    return [Correction(t, pd.Timestamp(d), "row", "accept", why) for t, d, why in SAMPLE_SOURCE_ACCEPTED]


def apply_corrections(
    frame: pd.DataFrame, issues: list[BarIssue], corrections: list[Correction]
) -> Corrected:
    """Apply one symbol's corrections to its normalized bars and close the issues they fix."""
    out = frame.copy()
    open_issues = list(issues)
    result = Corrected(out, open_issues)
    for fix in corrections:
        on_day = out["date"] == fix.date
        if fix.column == "row":
            if fix.value == "drop":
                out = out[~on_day]
                open_issues = [i for i in open_issues if i.date != fix.date]
            else:
                result.accepted_days.add(fix.date)
        else:
            if not on_day.any():
                row = {c: np.nan for c in PRICE_COLUMNS} | {"date": fix.date}
                out = pd.concat([out, pd.DataFrame([row])], ignore_index=True)
                on_day = out["date"] == fix.date
            out.loc[on_day, fix.column] = float(fix.value)
            if fix.column == "close":
                out.loc[on_day & out["adj_close"].isna(), "adj_close"] = float(fix.value)
            open_issues = [i for i in open_issues if not (i.date == fix.date and i.column == fix.column)]
        result.applied.append(fix.describe())
    result.frame = (
        out.sort_values("date").reset_index(drop=True).astype({c: "float64" for c in PRICE_COLUMNS})
    )
    result.issues = open_issues
    return result
