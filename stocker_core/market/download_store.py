"""What an online source has downloaded, kept so that a month is asked for once.

One Parquet file per ticker under the store's folder (``$STOCKER_HOME/downloads/yfinance``):
the normalized bars as the provider sent them, and in the file's metadata the closed months
those bars cover (a covered month with no rows is an honest empty month: before listing,
after delisting) and, once a whole history was downloaded, the symbol's first day. Each save
replaces the file atomically, so an interrupted run leaves every ticker as it was before or
after its batch, never half of one.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterable
from datetime import date
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from stocker_core.atomic_files import write_bytes_atomic
from stocker_core.market.frames import FRAME_COLUMNS, empty_frame
from stocker_core.market.validation import validate_ticker

_META_KEY = b"stocker.download"


def months_in(start: date, end: date) -> list[date]:
    """First days of the calendar months that ``[start, end)`` touches."""
    if end <= start:
        return []
    periods = pd.period_range(start, pd.Timestamp(end) - pd.Timedelta(days=1), freq="M")
    return [p.to_timestamp().date() for p in periods]


class DownloadStore:
    """Per-ticker downloaded bars and the closed months they cover."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _path(self, ticker: str) -> Path:
        return self.folder / f"{validate_ticker(ticker)}.parquet"

    def _load(self, ticker: str) -> tuple[pd.DataFrame, set[date], date | None]:
        path = self._path(ticker)
        if not path.is_file():
            return empty_frame(), set(), None
        table = pq.read_table(path)
        meta = json.loads((table.schema.metadata or {}).get(_META_KEY, b"{}"))
        covered = {date.fromisoformat(m) for m in meta.get("covered", [])}
        listed = date.fromisoformat(meta["listed"]) if meta.get("listed") else None
        frame = table.to_pandas()
        frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
        return frame[FRAME_COLUMNS].reset_index(drop=True), covered, listed

    def _meta(self, ticker: str) -> dict:
        """The file's record alone (its footer, not its bars); empty when nothing is stored."""
        path = self._path(ticker)
        if not path.is_file():
            return {}
        return json.loads((pq.read_metadata(path).metadata or {}).get(_META_KEY, b"{}"))

    def fresh(self, ticker: str, within_s: float) -> set[date]:
        """Every month saved (open ones too) when the ticker's file was written less than
        ``within_s`` seconds ago, else none: an open month fetched moments ago (by a batch
        before the per-ticker builds) is not asked again at once."""
        path = self._path(ticker)
        if not path.is_file():
            return set()
        table = pq.read_metadata(path)
        meta = json.loads((table.metadata or {}).get(_META_KEY, b"{}"))
        recent = time.time() - path.stat().st_mtime < within_s
        return {date.fromisoformat(m) for m in meta.get("saved", [])} if recent else set()

    def has(self, ticker: str) -> bool:
        """Whether anything of ``ticker`` was ever stored."""
        return self._path(ticker).is_file()

    def covered(self, ticker: str) -> set[date]:
        """Closed months (first days) whose bars are stored, rows or none."""
        return {date.fromisoformat(m) for m in self._meta(ticker).get("covered", [])}

    def listed(self, ticker: str) -> date | None:
        """The symbol's first day, when a whole history was stored; else None."""
        listed = self._meta(ticker).get("listed")
        return date.fromisoformat(listed) if listed else None

    def read(self, ticker: str, start: date, end: date) -> pd.DataFrame:
        """Stored bars with ``start <= date < end``."""
        frame = self._load(ticker)[0]
        mask = (frame["date"] >= pd.Timestamp(start)) & (frame["date"] < pd.Timestamp(end))
        return frame.loc[mask].reset_index(drop=True)

    def save(
        self,
        ticker: str,
        bars: pd.DataFrame,
        months: Iterable[date],
        closed: Iterable[date],
        listed: date | None = None,
    ) -> None:
        """Replace the stored rows of ``months`` with ``bars``'s rows in them, and record the
        ``closed`` ones among them as covered (an open month is kept but asked again);
        ``listed``: the first day, when ``bars`` is the symbol's whole history."""
        months = sorted(set(months))
        if not months:
            return
        stored, covered, known = self._load(ticker)
        saved = covered | set(months)
        chosen = pd.PeriodIndex(months, freq="M")
        inside = stored["date"].dt.to_period("M").isin(chosen)
        wanted = bars.loc[bars["date"].dt.to_period("M").isin(chosen)]
        parts = [frame for frame in (stored.loc[~inside], wanted[FRAME_COLUMNS]) if len(frame)]
        merged = pd.concat(parts, ignore_index=True) if parts else empty_frame()
        merged = merged.sort_values("date").reset_index(drop=True)
        covered |= set(closed) & set(months)
        table = pa.Table.from_pandas(merged, preserve_index=False)
        listed = listed or known
        record = {
            "covered": sorted(map(str, covered)),
            "saved": sorted(map(str, saved | covered)),
            "listed": str(listed) if listed else None,
        }
        meta = {**(table.schema.metadata or {}), _META_KEY: json.dumps(record).encode()}
        buffer = io.BytesIO()
        pq.write_table(table.replace_schema_metadata(meta), buffer)
        write_bytes_atomic(self._path(ticker), buffer.getvalue())
