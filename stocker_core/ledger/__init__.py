"""The forward paper-trading ledger: every policy's decision for the next session recorded,
hash-chained, before its outcome exists; scored when the outcome lands (docs/forward-ledger.md).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "LedgerEntry": "entries",
    "to_jsonl": "entries",
    "from_jsonl": "entries",
    "LedgerStore": "store",
    "LedgerInputError": "store",
    "LedgerIntegrityError": "store",
    "read_ledger": "reader",
    "check_outcomes": "reader",
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


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "entries":
        import stocker_core.ledger.entries as module
    elif name == "store":
        import stocker_core.ledger.store as module
    elif name == "reader":
        import stocker_core.ledger.reader as module
    elif name == "record":
        import stocker_core.ledger.record as module
    elif name == "score":
        import stocker_core.ledger.score as module
    elif name == "verify":
        import stocker_core.ledger.verify as module
    elif name == "service":
        import stocker_core.ledger.service as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
