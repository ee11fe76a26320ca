"""The forward ledger as the web page shows it: each policy's equity from its scored entries
(views ``ledger.scores`` and ``ledger.record``), live and replayed apart."""

from __future__ import annotations

from typing import Any

from stocker_core.ledger.entries import MODES
from stocker_core.ledger.score import daily_returns
from stocker_core.web.reader import WarehouseReader, plain, records

NO_LEDGER = (
    "no scored ledger entries yet: `stocker ledger record` after a close, then `stocker ledger score` "
    "once the next session's bar has landed (docs/forward-ledger.md)"
)


def forward_overview(reader: WarehouseReader) -> dict[str, Any]:
    """Per mode: each policy's daily equity (from 1.0) and buy-and-hold's on the same days, and
    the stored forward record rows; ``empty`` says why there is nothing."""
    scores = reader.frame("SELECT * FROM ledger.scores ORDER BY seq", needs=["ledger.scores"])
    if scores.empty:
        return {"empty": NO_LEDGER, "modes": {}, "record": []}
    record = reader.frame("SELECT * FROM ledger.record ORDER BY mode, policy", needs=["ledger.record"])
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
