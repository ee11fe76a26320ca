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
    end: Head = field(default_factory=lambda: Head(0, GENESIS))
    """The chain's last entry (number and hash) as checked; ``0:GENESIS`` when empty."""
    notes: list[str] = field(default_factory=list)
    """What was checked beyond the chain (a published head it continues), for the success line."""

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
    except (ValueError, OverflowError) as exc:
        return f"entry {entry.describe()}: unreadable dates ({exc})"
    if recorded >= outcome:
        return (
            f"entry {entry.describe()}: recorded at {recorded.isoformat()}, not before its outcome bar's "
            f"close {outcome.isoformat()}"
        )
    return None


def verify_chain(
    entries: Sequence[LedgerEntry], head: Head | None = None, published: Sequence[Head] = ()
) -> Verification:
    """Every problem of ``entries`` (in ``seq`` order): a content that does not match its hash
    (an edited entry), a number that appears twice, a broken link or a gap in the numbering (a
    deleted entry), an entry recorded after its outcome; when given, a ``head`` the chain does not
    end at (entries deleted at the end, or added after it); and each ``published`` head the chain
    does not pass through (an earlier published head is a prefix: the chain up to it must be the
    one published, entries after it are what was recorded since)."""
    report = Verification(len(entries))
    prev_hash, prev_seq = GENESIS, 0
    hashes: dict[int, str] = {}
    for entry in entries:
        if entry.seq <= prev_seq:
            report.problems.append(
                f"entry #{entry.seq} appears twice ({entry.describe()} is a second one)"
                if entry.seq in hashes
                else f"entry {entry.describe()}: numbered {entry.seq}, the chain starts at #1"
            )
            continue
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
        try:
            sealed = content_hash(entry.content()) == entry.hash
        except ValueError as exc:  # a value JSON cannot hold (NaN): never hashed by the ledger
            report.problems.append(f"entry {entry.describe()}: a value the ledger never hashes ({exc})")
            sealed = True
        if not sealed:
            report.problems.append(f"entry {entry.describe()}: its content does not match its hash (edited)")
        late = _recorded_late(entry)
        if late:
            report.problems.append(late)
        prev_hash, prev_seq = entry.hash, entry.seq
        hashes[entry.seq] = entry.hash
    report.end = Head(prev_seq, prev_hash)
    if head is not None and (head.entries, head.hash) != (prev_seq, prev_hash):
        if head.entries > prev_seq:
            report.problems.append(
                f"entry #{prev_seq + 1} is missing: the head records {head.entries} entries, the chain "
                f"ends at #{prev_seq} (entries deleted at the end)"
            )
        elif hashes.get(head.entries) == head.hash:
            report.problems.append(
                f"entries #{head.entries + 1}…#{prev_seq} lie after the head (#{head.entries}): a recording "
                "interrupted before it moved the head (`stocker ledger record` finishes it), or entries "
                "added by hand"
            )
        else:
            report.problems.append(
                f"the head records {head.entries} entries ending in {head.hash[:12]}…, the chain has "
                f"{_at(hashes, head.entries)} there (the chain or the head was rewritten)"
            )
    for mark in published:
        if mark.entries > prev_seq:
            report.problems.append(
                f"entry #{prev_seq + 1} is missing: the published head {mark.entries}:{mark.hash[:12]}… "
                f"records {mark.entries} entries, the chain ends at #{prev_seq} (entries deleted at the end)"
            )
        elif hashes.get(mark.entries) != mark.hash:
            report.problems.append(
                f"entry #{mark.entries} does not match the published head {mark.entries}:{mark.hash[:12]}… "
                f"(the chain has {_at(hashes, mark.entries)} there): entries up to #{mark.entries} were "
                "rewritten after it was published"
            )
        else:
            after = prev_seq - mark.entries
            report.notes.append(
                f"matches the published head {mark.entries}:{mark.hash[:12]}…"
                + (f" ({after} entries recorded after it)" if after else "")
            )
    return report


def _at(hashes: dict[int, str], seq: int) -> str:
    return f"{hashes[seq][:12]}…" if seq in hashes else f"no entry #{seq}"
