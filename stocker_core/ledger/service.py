"""The ledger's steps as the CLI and the Dagster assets run them: score and store, verify the store."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from stocker_core.config import Settings
from stocker_core.ledger.score import forward_record, score_entries
from stocker_core.ledger.store import LedgerStore
from stocker_core.ledger.verify import Verification, verify_chain


@dataclass(frozen=True)
class Scored:
    """What a scoring stored: one row per scored entry, the forward record, the pending count."""

    scores: pd.DataFrame
    record: pd.DataFrame
    pending: int


def verify_ledger(settings: Settings) -> Verification:
    """The stored chain and its head, checked (``verify_chain``)."""
    store = LedgerStore(settings)
    return verify_chain(store.read(), store.head())


def score_ledger(settings: Settings) -> Scored:
    """Score every entry whose outcome has landed and store ``ledger.scores`` and ``ledger.record``."""
    store = LedgerStore(settings)
    scores, pending = score_entries(settings, store.read())
    record = forward_record(scores)
    store.check_writable()
    store.write_table("scores", scores)
    store.write_table("record", record)
    return Scored(scores, record, pending)
