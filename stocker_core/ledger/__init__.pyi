"""The public names of ``stocker_core.ledger``, imported on first use (``__init__.py``)."""

from .entries import LedgerEntry as LedgerEntry, to_jsonl as to_jsonl, from_jsonl as from_jsonl
from .store import (
    LedgerStore as LedgerStore,
    LedgerInputError as LedgerInputError,
    LedgerIntegrityError as LedgerIntegrityError,
)
from .reader import read_ledger as read_ledger, check_outcomes as check_outcomes
from .record import LedgerRefusedError as LedgerRefusedError, record as record, plan_session as plan_session
from .score import (
    score_entries as score_entries,
    forward_record as forward_record,
    daily_returns as daily_returns,
)
from .verify import verify_chain as verify_chain
from .service import score_ledger as score_ledger, verify_ledger as verify_ledger
