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
    discarded: str | None = None
    """The derived tables' first problem when ``recompute`` wrote over tables that failed."""


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


def refuse_unless_verified(
    settings: Settings, ledger: Ledger, *, bars: bool = True, finishes: str | None = None
) -> None:
    """LedgerIntegrityError naming the first problem whenever ``verify`` would fail on
    ``ledger`` — the chain, ``HEAD``, every file, the derived tables and, with ``bars``, the
    scores against the bars. ``finishes="recording"`` (or ``"scoring"``): a recording
    interrupted before it moved ``HEAD`` (a scoring before it wrote ``SCORED``), when the
    evidence says so (``Ledger.unfinished``, ``Ledger.scoring_unfinished``), is not a refusal:
    the caller finishes it. ``"recomputing"``: derived tables that fail are not a refusal
    either (the caller writes over them) unless they were computed from another chain
    (``Ledger.scored_elsewhere``: evidence of deleted or rewritten entries)."""
    problems = [] if finishes == "recording" and ledger.unfinished else list(ledger.problems)
    if finishes == "recomputing":
        problems += [ledger.scored_elsewhere] if ledger.scored_elsewhere else []
        bars = False
    elif not (finishes == "scoring" and ledger.scoring_unfinished):
        problems += ledger.derived_problems
    if not problems and bars and not ledger.scoring_unfinished:
        problems = check_outcomes(settings, ledger)
    if problems:
        more = len(problems) - 1
        raise LedgerIntegrityError(
            f"the ledger fails verification: {problems[0]}"
            + (f" (and {more} more problem(s): `stocker ledger verify` lists them)" if more else "")
        )


def read_verified(settings: Settings) -> Ledger:
    """The stored ledger when ``verify`` would pass on it, derived tables and bars included
    (LedgerIntegrityError naming the first problem otherwise): what ``head`` and ``export``
    stand on."""
    ledger = read_ledger(LedgerStore(settings))
    refuse_unless_verified(settings, ledger)
    return ledger


def score_ledger(settings: Settings, recompute: bool = False) -> Scored:
    """Score every entry whose outcome has landed and store ``ledger.scores`` and ``ledger.record``
    (with ``SCORED``: the chain they were computed from and when). LedgerIntegrityError, nothing
    written, whenever ``verify`` would fail, derived tables included (they are evidence: a
    scoring never writes over tables that fail), except a scoring interrupted before it wrote
    ``SCORED``, which this one finishes. ``recompute``: write over derived tables that fail
    (said in ``Scored.discarded``), unless they were computed from another chain."""
    from stocker_core.ledger.score import forward_record, score_entries

    store = LedgerStore(settings)
    ledger = read_ledger(store)
    finishes = "recomputing" if recompute else "scoring"
    refuse_unless_verified(settings, ledger, finishes=finishes)
    instant = clock_now(settings.clock)
    scores, pending = score_entries(settings, ledger.entries, instant)
    record = forward_record(scores)
    store.check_writable()
    with store.locked():
        again = read_ledger(store, locked=True)
        refuse_unless_verified(settings, again, bars=False, finishes=finishes)
        if again.end != ledger.end:  # recorded meanwhile: score what is there now
            ledger = again
            scores, pending = score_entries(settings, ledger.entries, instant)
            record = forward_record(scores)
        store.remove_temporaries()
        scored = store.write_derived(scores, record, ledger.end, instant)
        store.refresh_views(again.files, scored, again.digests)
    discarded = again.derived_problems[0] if recompute and again.derived_problems else None
    return Scored(scores, record, pending, discarded)
