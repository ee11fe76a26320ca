"""The forward ledger as the web page shows it: each policy's equity from its scored entries,
live and replayed apart, read through the ledger's one reader (``ledger.reader.read_ledger``):
a ledger that fails verification shows nothing but its first problem."""

from __future__ import annotations

from typing import Any

from stocker_core.ledger.entries import MODES
from stocker_core.ledger.reader import read_ledger
from stocker_core.ledger.score import daily_returns
from stocker_core.ledger.store import LedgerStore
from stocker_core.web.reader import WarehouseReader, plain, records

NO_LEDGER = (
    "no scored ledger entries yet: `stocker ledger record` after a close, then `stocker ledger score` "
    "once the next session's bar has landed (docs/forward-ledger.md)"
)


def forward_overview(reader: WarehouseReader) -> dict[str, Any]:
    """Per mode: each policy's daily equity (from 1.0) and buy-and-hold's on the same days, and
    the stored forward record rows, once the reader verified them (the chain, ``HEAD``, every
    file, the scores and record against the chain); ``empty`` says why there is nothing."""
    ledger = read_ledger(LedgerStore(warehouse_path=reader.path))
    if not ledger.ok:
        problem = f"the forward ledger fails verification, nothing shown: {ledger.summary()}"
        return {"empty": problem, "modes": {}, "record": []}
    scores = ledger.scores.sort_values("seq").reset_index(drop=True) if len(ledger.scores) else ledger.scores
    if scores.empty:
        return {"empty": NO_LEDGER, "modes": {}, "record": []}
    record = ledger.record.sort_values(["mode", "policy"]).reset_index(drop=True)
    daily = daily_returns(scores)
    modes: dict[str, Any] = {}
    for mode in MODES:
        days = daily.loc[daily["mode"] == mode]
        if days.empty:
            continue
        sessions = sorted(days["for_session"].unique())
        curves = {}
        for policy, rows in days.groupby("policy", sort=True):
            equity = dict(zip(rows["for_session"], rows["equity"], strict=True))
            curves[policy] = [equity.get(day) for day in sessions]
        bench = days.drop_duplicates("for_session").set_index("for_session")["benchmark_equity"]
        modes[mode] = {"sessions": sessions, "equity": curves, "benchmark": [bench.get(d) for d in sessions]}
    return {"empty": None, "modes": plain(modes), "record": records(record)}
