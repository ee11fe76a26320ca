"""The vote cache: DuckDB table ``council.votes``.

Keyed by (role, backend, model_id, prompt_version, ticker, date): a new prompt or a
new model gets new rows, and the others stay valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime

import pandas as pd

from stocker_core.council.models import SpecialistVote
from stocker_core.warehouse.db import Warehouse

VOTES_TABLE = "council.votes"
VOTES_DDL = """
CREATE TABLE IF NOT EXISTS council.votes (
    role VARCHAR NOT NULL, backend VARCHAR NOT NULL, model_id VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL, ticker VARCHAR NOT NULL, date DATE NOT NULL,
    signal DOUBLE NOT NULL, confidence DOUBLE NOT NULL, rationale VARCHAR,
    parse_error BOOLEAN NOT NULL DEFAULT FALSE, created_at TIMESTAMP,
    PRIMARY KEY (role, backend, model_id, prompt_version, ticker, date))"""
VOTE_COLUMNS = [
    "role",
    "backend",
    "model_id",
    "prompt_version",
    "ticker",
    "date",
    "signal",
    "confidence",
    "rationale",
    "parse_error",
    "created_at",
]


class VoteCache:
    """Read-first vote storage in the warehouse."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse
        self._ready = False

    def ensure_table(self) -> None:
        """Create ``council.votes`` if missing."""
        if self._ready:
            return
        with self.warehouse.connect() as con:
            con.execute("CREATE SCHEMA IF NOT EXISTS council")
            con.execute(VOTES_DDL)
        self._ready = True

    def votes_for(
        self,
        ticker: str,
        dates: Sequence[date | pd.Timestamp | str],
        *,
        backend: str | None = None,
        model_id: str | None = None,
        prompt_versions: dict[str, str] | None = None,
    ) -> pd.DataFrame:
        """Cached rows of ``ticker`` on ``dates`` (optionally of one backend/model and the
        given role -> prompt version map), one query."""
        self.ensure_table()
        day_list = [pd.Timestamp(d).date() for d in dates]
        sql = (
            f"SELECT {', '.join(VOTE_COLUMNS)} FROM {VOTES_TABLE} "
            "WHERE ticker = ? AND date IN (SELECT unnest(?::DATE[]))"
        )
        params: list[object] = [ticker, day_list]
        if backend is not None:
            sql += " AND backend = ?"
            params.append(backend)
        if model_id is not None:
            sql += " AND model_id = ?"
            params.append(model_id)
        with self.warehouse.connect(read_only=True) as con:
            frame = con.execute(sql + " ORDER BY date, role", params).df()
        if prompt_versions is not None and len(frame):
            wanted = frame["role"].map(prompt_versions)
            frame = frame.loc[frame["prompt_version"] == wanted].reset_index(drop=True)
        frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
        return frame

    def lookup(
        self,
        ticker: str,
        dates: Sequence[date | pd.Timestamp | str],
        backend: str,
        model_id: str,
        prompt_versions: dict[str, str],
    ) -> dict[tuple[str, pd.Timestamp], SpecialistVote]:
        """Cached votes keyed by (role, date) for one backend/model and prompt versions."""
        frame = self.votes_for(
            ticker, dates, backend=backend, model_id=model_id, prompt_versions=prompt_versions
        )
        return {
            (role, pd.Timestamp(day)): SpecialistVote(
                role=role, signal=signal, confidence=conf, rationale=rationale or "", parse_error=bool(perr)
            )
            for role, day, signal, conf, rationale, perr in frame[
                ["role", "date", "signal", "confidence", "rationale", "parse_error"]
            ].itertuples(index=False)
        }

    def store(
        self,
        ticker: str,
        backend: str,
        model_id: str,
        rows: Iterable[tuple[pd.Timestamp, SpecialistVote, str]],
    ) -> int:
        """Upsert ``(date, vote, prompt_version)`` rows; returns how many."""
        now = datetime.now()
        records = [
            (
                v.role,
                backend,
                model_id,
                pv,
                ticker,
                pd.Timestamp(d).date(),
                v.signal,
                v.confidence,
                v.rationale,
                v.parse_error,
                now,
            )
            for d, v, pv in rows
        ]
        if not records:
            return 0
        self.ensure_table()
        frame = pd.DataFrame(records, columns=VOTE_COLUMNS)
        with self.warehouse.connect() as con:
            con.register("incoming_votes", frame)
            con.execute(f"INSERT OR REPLACE INTO {VOTES_TABLE} BY NAME SELECT * FROM incoming_votes")
            con.unregister("incoming_votes")
        return len(records)
