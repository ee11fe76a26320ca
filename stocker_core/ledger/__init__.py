"""The forward paper-trading ledger: every policy's decision for the next session recorded,
hash-chained, before its outcome exists; scored when the outcome lands (docs/forward-ledger.md).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "LedgerEntry": "entries",
    "to_jsonl": "entries",
    "from_jsonl": "entries",
    "LedgerStore": "store",
    "LedgerInputError": "store",
    "LedgerRefusedError": "record",
    "record": "record",
    "plan_session": "record",
    "score_entries": "score",
    "forward_record": "score",
    "daily_returns": "score",
    "verify_chain": "verify",
    "score_ledger": "service",
    "verify_ledger": "service",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
