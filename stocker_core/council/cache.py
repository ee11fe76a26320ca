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
        """Create the warehouse's tables and views (``council.votes`` among them) if missing."""
        if self._ready:
            return
        self.warehouse.ensure_schema()
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
        where = "date IN (SELECT unnest(?::DATE[]))"
        params: list[object] = [day_list]
        if backend is not None:
            where += " AND backend = ?"
            params.append(backend)
        if model_id is not None:
            where += " AND model_id = ?"
            params.append(model_id)
        frame = self.warehouse.read_partitioned(
            VOTES_TABLE, ticker, where, params, VOTE_COLUMNS, order="date, role"
        )
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
        return self.warehouse.upsert_partitioned(VOTES_TABLE, ticker, frame)
