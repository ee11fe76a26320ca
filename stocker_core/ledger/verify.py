"""Verifying a ledger: re-hash the chain, check the links and the head, and that every entry was
recorded before its outcome bar's close (from the exchange calendar, no data needed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import pandas as pd

from stocker_core.ledger.entries import GENESIS, LedgerEntry, content_hash
from stocker_core.ledger.store import Head
from stocker_core.market.clock import close_of


@dataclass
class Verification:
    """What ``verify_chain`` found: the entries checked and each problem, in chain order."""

    entries: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_problem(self) -> str | None:
        return self.problems[0] if self.problems else None


def _recorded_late(entry: LedgerEntry) -> str | None:
    try:
        recorded = pd.Timestamp(entry.recorded_at)
        if recorded.tzinfo is None:
            return f"entry {entry.describe()}: recorded_at {entry.recorded_at!r} has no zone"
        outcome = close_of(date.fromisoformat(entry.for_session))
    except ValueError as exc:
        return f"entry {entry.describe()}: unreadable dates ({exc})"
    if recorded >= outcome:
        return (
            f"entry {entry.describe()}: recorded at {recorded.isoformat()}, not before its outcome bar's "
            f"close {outcome.isoformat()}"
        )
    return None


def verify_chain(entries: Sequence[LedgerEntry], head: Head | None = None) -> Verification:
    """Every problem of ``entries`` (in ``seq`` order) and, when given, of the ``head`` they should
    end at: a content that does not match its hash (an edited entry), a broken link or a gap in
    the numbering (a deleted entry), an entry recorded after its outcome, a chain that ends
    before the head (entries deleted at the end)."""
    report = Verification(len(entries))
    prev_hash, prev_seq = GENESIS, 0
    for entry in entries:
        if entry.seq != prev_seq + 1:
            missing = f"#{prev_seq + 1}" if entry.seq == prev_seq + 2 else f"#{prev_seq + 1}…#{entry.seq - 1}"
            report.problems.append(
                f"entry {missing} is missing: the chain goes from #{prev_seq} to {entry.describe()}"
            )
        elif entry.prev_hash != prev_hash:
            report.problems.append(
                f"entry {entry.describe()}: its link does not match the hash of entry #{prev_seq} "
                "(an entry before it was edited, replaced or deleted)"
            )
        if content_hash(entry.content()) != entry.hash:
            report.problems.append(f"entry {entry.describe()}: its content does not match its hash (edited)")
        late = _recorded_late(entry)
        if late:
            report.problems.append(late)
        prev_hash, prev_seq = entry.hash, entry.seq
    if head is not None and (head.entries, head.hash) != (prev_seq, prev_hash):
        if head.entries > prev_seq:
            report.problems.append(
                f"entry #{prev_seq + 1} is missing: the head records {head.entries} entries, the chain "
                f"ends at #{prev_seq} (entries deleted at the end)"
            )
        else:
            report.problems.append(
                f"the head records {head.entries} entries ending in {head.hash[:12]}…, the chain ends at "
                f"#{prev_seq} ({prev_hash[:12]}…)"
            )
    return report
