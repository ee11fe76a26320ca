"""The corpus as stored: tickers and their bars, months and which assets are materialized
for each (from ``meta.lineage``), quarantined months, stored episodes, the Dagster UI link."""

from __future__ import annotations

import socket
import time
from typing import Any
from urllib.parse import quote, urlsplit

import pandas as pd

from stocker_core.env.tasks import TASKS
from stocker_core.web.reader import WarehouseReader, plain, records

NO_PRICES = "no prices yet: run `stocker materialize` to build the corpus"
PARTITIONED_ASSETS = (
    "prices",
    "indicators",
    "charts",
    "episodes",
    "ideal_trajectories",
    "specialist_votes",
    "backtests",
)
"""The ticker × month assets, in graph order (the corpus table's columns)."""


def ticker_table(reader: WarehouseReader) -> list[dict[str, Any]]:
    """One row per ticker with stored bars: first and last day, trading days, sources."""
    frame = reader.frame(
        """SELECT ticker, min(date) AS first_date, max(date) AS last_date, count(*) AS days,
                  string_agg(DISTINCT coalesce(source, '?'), ', ') AS sources
           FROM market.prices GROUP BY ticker ORDER BY ticker""",
        needs=["market.prices"],
    )
    return records(frame)


def materialized_months(reader: WarehouseReader) -> dict[str, list[dict[str, Any]]]:
    """Per ticker, each month with the partitioned assets materialized for it and its quality status."""
    lineage = reader.frame(
        """SELECT split_part(partition, '|', 1) AS ticker, split_part(partition, '|', 2) AS month,
                  list(DISTINCT asset ORDER BY asset) AS assets, max(materialized_at) AS latest
           FROM meta.lineage WHERE partition LIKE '%|%' GROUP BY 1, 2 ORDER BY 1, 2""",
        needs=["meta.lineage"],
    )
    quality = reader.frame("SELECT ticker, month, status FROM market.quality", needs=["market.quality"])
    status = {(t, plain(m)): s for t, m, s in quality.itertuples(index=False)} if len(quality) else {}
    out: dict[str, list[dict[str, Any]]] = {}
    for ticker, month, assets, latest in lineage.itertuples(index=False) if len(lineage) else []:
        out.setdefault(ticker, []).append(
            plain(
                {
                    "month": month,
                    "assets": [a for a in PARTITIONED_ASSETS if a in set(assets)],
                    "latest": latest,
                    "quality": status.get((ticker, month)),
                }
            )
        )
    for (ticker, month), state in status.items():
        if state != "passed" and not any(m["month"] == month for m in out.get(ticker, [])):
            out.setdefault(ticker, []).append(
                {"month": month, "assets": [], "latest": None, "quality": state}
            )
    for months in out.values():
        months.sort(key=lambda m: m["month"])
    return out


def episode_choices(reader: WarehouseReader) -> dict[str, Any]:
    """The task aliases and every stored episode (``env.episodes``) for the episode pickers, and
    ``example_key``: a key of this home's data for the key field's placeholder."""
    stored = reader.frame(
        "SELECT key, ticker, start_date, end_date, trading_days FROM env.episodes ORDER BY ticker, month",
        needs=["env.episodes"],
    )
    tasks = [
        {"task_id": t.task_id, "key": t.key, "ticker": t.ticker, "regime": t.regime} for t in TASKS.values()
    ]
    episodes = records(stored)
    return {"tasks": tasks, "episodes": episodes, "example_key": example_key(reader, episodes)}


def example_key(reader: WarehouseReader, episodes: list[dict[str, Any]] | None = None) -> str:
    """A partition key that exists in this home: the last stored episode's, else the last
    complete month of the first ticker with stored bars, else the first reference task's (its
    data ships with the package)."""
    if episodes:
        return str(episodes[-1]["key"])
    months = reader.frame(
        """SELECT ticker, date_trunc('month', max(date))::DATE AS last_month,
                  date_trunc('month', min(date))::DATE AS first_month
           FROM market.prices GROUP BY ticker ORDER BY ticker LIMIT 1""",
        needs=["market.prices"],
    )
    if len(months):
        ticker, last, first = months.iloc[0]
        month = pd.Timestamp(last) - pd.DateOffset(months=1)  # the last month may be partial
        if month >= pd.Timestamp(first):
            return f"{ticker}|{month.date().isoformat()}"
    return next(iter(TASKS.values())).key


class DagsterLink:
    """Links to assets in the Dagster UI, offered only while the UI answers on its port."""

    def __init__(self, base_url: str, check_every: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.check_every = check_every
        self._checked = 0.0
        self._up = False

    def running(self) -> bool:
        """Whether something listens at the UI's host and port (checked at most every 10 s)."""
        now = time.monotonic()
        if now - self._checked < self.check_every:
            return self._up
        parts = urlsplit(self.base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=0.2):
                self._up = True
        except OSError:
            self._up = False
        self._checked = now
        return self._up

    def asset_url(self, asset: str) -> str:
        return f"{self.base_url}/assets/{quote(asset)}"

    def payload(self) -> dict[str, Any]:
        up = self.running()
        return {
            "url": self.base_url,
            "running": up,
            "assets": {a: self.asset_url(a) for a in PARTITIONED_ASSETS} if up else {},
            "hint": None
            if up
            else f"the Dagster UI is not running at {self.base_url}: start it with `stocker ui`",
        }


def corpus_overview(reader: WarehouseReader, dagster: DagsterLink) -> dict[str, Any]:
    """Tickers, their months and materialized assets, quarantined months and the Dagster link."""
    tickers = ticker_table(reader)
    return {
        "empty": None if tickers else NO_PRICES,
        "tickers": tickers,
        "months": materialized_months(reader),
        "columns": list(PARTITIONED_ASSETS),
        "dagster": dagster.payload(),
    }
