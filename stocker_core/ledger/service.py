"""The ledger's steps as the CLI and the Dagster assets run them: score and store, verify the store.

Both read through ``reader.read_ledger``, the one reader every view of the ledger uses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from stocker_core.config import Settings
from stocker_core.ledger.reader import Ledger, check_outcomes, read_ledger
from stocker_core.ledger.store import Head, LedgerIntegrityError, LedgerStore
from stocker_core.ledger.verify import Verification
from stocker_core.market.clock import clock_now


@dataclass(frozen=True)
class Scored:
    """What a scoring stored: one row per scored entry, the forward record, the pending count."""

    scores: pd.DataFrame
    record: pd.DataFrame
    pending: int


def verify_ledger(settings: Settings, published: Sequence[Head] = (), bars: bool = True) -> Verification:
    """Everything the reader checks (the chain, ``HEAD``, every file, the derived tables against
    the chain), each ``published`` head as a prefix, and with ``bars`` the scores against the
    outcome bars (``check_outcomes``)."""
    ledger = read_ledger(LedgerStore(settings), tuple(published))
    problems = ledger.all_problems
    if bars and not problems:
        problems = check_outcomes(settings, ledger)
    notes = list(ledger.notes)
    if ledger.scored is None:
        notes.append("not scored yet")
    else:
        checked = "the chain and the bars" if bars else "the chain"
        notes.append(f"scores and record (up to #{ledger.scored.head.entries}) match {checked}")
    return Verification(len(ledger.entries), list(problems), ledger.end, notes)


def read_verified(settings: Settings) -> Ledger:
    """The stored ledger when its chain verifies (LedgerIntegrityError naming the first problem
    otherwise): what ``show``, ``head``, ``export`` and ``score`` stand on."""
    ledger = read_ledger(LedgerStore(settings))
    if ledger.problems:
        raise LedgerIntegrityError(f"the ledger fails verification: {ledger.summary()}")
    return ledger


def score_ledger(settings: Settings) -> Scored:
    """Score every entry whose outcome has landed and store ``ledger.scores`` and ``ledger.record``
    (with ``SCORED``: the chain they were computed from and when). LedgerIntegrityError, nothing
    written, when the chain fails verification; derived tables that fail are recomputed."""
    from stocker_core.ledger.score import forward_record, score_entries

    store = LedgerStore(settings)
    ledger = read_verified(settings)
    instant = clock_now(settings.clock)
    scores, pending = score_entries(settings, ledger.entries, instant)
    record = forward_record(scores)
    store.check_writable()
    with store.locked():
        again = read_ledger(store, locked=True)
        if again.problems:
            raise LedgerIntegrityError(f"the ledger fails verification: {again.summary()}")
        if again.end != ledger.end:  # recorded meanwhile: score what is there now
            ledger = again
            scores, pending = score_entries(settings, ledger.entries, instant)
            record = forward_record(scores)
        store.remove_temporaries()
        scored = store.write_derived(scores, record, ledger.end, instant)
        store.refresh_views(ledger.files, scored)
    return Scored(scores, record, pending)
