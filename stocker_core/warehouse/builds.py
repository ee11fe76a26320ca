"""``meta.builds``: per asset and partition, the input fingerprint of its last successful
build and what the latest `stocker materialize` decided (built or skipped, and why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from stocker_core.warehouse.db import Warehouse


@dataclass(frozen=True)
class BuildDecision:
    """One row of ``meta.builds``."""

    asset: str
    partition: str
    """``TICKER|YYYY-MM-01``, or ``""`` for an unpartitioned scope."""
    fingerprint: str
    decision: str
    """``built`` or ``skipped``."""
    reason: str
    run_id: str | None = None


def all_fingerprints(warehouse: Warehouse) -> list[tuple[str, str, str]]:
    """(asset, partition, fingerprint) of every recorded build."""
    with warehouse.connect(read_only=True) as con:
        if not warehouse._table_exists(con, "meta.builds"):
            return []
        return [
            tuple(r) for r in con.execute("SELECT asset, partition, fingerprint FROM meta.builds").fetchall()
        ]


def record_decisions(warehouse: Warehouse, decisions: Sequence[BuildDecision]) -> None:
    """Upsert ``decisions`` in one transaction (the latest decision per asset and partition)."""
    if not decisions:
        return
    frame = pd.DataFrame(
        {
            "asset": [d.asset for d in decisions],
            "partition": [d.partition for d in decisions],
            "fingerprint": [d.fingerprint for d in decisions],
            "decision": [d.decision for d in decisions],
            "reason": [d.reason for d in decisions],
            "run_id": [d.run_id for d in decisions],
            "decided_at": datetime.now(),
        }
    )
    with warehouse.transaction() as con:
        con.register("incoming_builds", frame)
        con.execute("INSERT OR REPLACE INTO meta.builds BY NAME SELECT * FROM incoming_builds")
        con.unregister("incoming_builds")


def forget_builds(warehouse: Warehouse) -> None:
    """Drop every recorded fingerprint: the next run rebuilds everything (``--force``)."""
    with warehouse.transaction() as con:
        con.execute("DELETE FROM meta.builds")
