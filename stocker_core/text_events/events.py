"""Text events (news, forum posts, macro events): validated schemas and sources.

The ``files`` source reads ``news.jsonl`` / ``forums.jsonl`` / ``macro.jsonl`` (or
``.csv`` with the same columns) from a drop folder. A malformed row raises
``DataSourceError`` naming the file, the line and the field. The optional yfinance
news fetcher takes its download function as an argument so it is testable offline.

Every event keeps its publication instant in ``published_at`` (UTC). A source states
it with a ``published_at`` field or a ``date`` that carries a time (ISO 8601 with or
without an offset — no offset means UTC — or epoch seconds); ``date`` is then the New
York calendar day of that instant. An event with only a date counts as published at
the end of that day, after its close (``time_stated`` is False): see
``stocker_core.decision_context.point_in_time`` for the cut-off a decision applies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stocker_core.errors import DataSourceError
from stocker_core.market.calendar import NEW_YORK
from stocker_core.market.validation import validate_ticker

EventKind = Literal["news", "forums", "macro"]


def _states_time(value: Any) -> bool:
    """Whether a ``date`` value carries a time of day (not just a calendar date)."""
    if isinstance(value, datetime):
        return value.tzinfo is not None or value.time() != time(0)
    if isinstance(value, str):
        return len(value.strip()) > 10
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 10**8


def _utc_instant(value: Any) -> datetime:
    """A publication time as an aware UTC datetime (naive times are taken as UTC)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC)
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a timestamp: {value!r}") from exc
    if pd.isna(stamp):
        raise ValueError(f"not a timestamp: {value!r}")
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.to_pydatetime()


class _Event(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    published_at: datetime | None = None
    """Publication instant (UTC) when the source states one; None for date-only events."""

    @model_validator(mode="before")
    @classmethod
    def _publication_time(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        raw_date = data.get("date")
        stated = data.get("published_at")
        if stated in (None, "") and _states_time(raw_date):
            stated = raw_date
        if stated in (None, ""):
            data["published_at"] = None
            if isinstance(raw_date, datetime):
                data["date"] = raw_date.date()
            return data
        instant = _utc_instant(stated)
        data["published_at"] = instant
        if raw_date in (None, "") or _states_time(raw_date):
            data["date"] = pd.Timestamp(instant).tz_convert(NEW_YORK).date()
        return data

    @field_validator("ticker", mode="after", check_fields=False)
    @classmethod
    def _ticker(cls, value: str) -> str:
        return validate_ticker(value.upper())


class NewsItem(_Event):
    """One headline about a ticker."""

    ticker: str
    date: date
    headline: str = Field(min_length=1)
    source: str = ""
    sentiment_label: Literal["positive", "negative", "neutral"] | None = None
    url: str | None = None


class ForumPost(_Event):
    """One forum/Reddit post about a ticker; ``score`` is its up-votes."""

    ticker: str
    date: date
    subreddit: str = ""
    score: int = 0
    post_text: str = Field(min_length=1)


class MacroEvent(_Event):
    """A dated macro event (CPI print, FOMC decision, ...)."""

    date: date
    country: str = "US"
    headline: str = Field(min_length=1)
    policy_signal: Literal["hawkish", "dovish", "neutral", "positive", "negative"] | None = None

    @field_validator("policy_signal", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() or None if isinstance(value, str) else value


# Risk direction of a macro policy signal for equities: hawkish/negative = risk-off.
POLICY_VALENCE: dict[str, float] = {
    "hawkish": -1.0,
    "negative": -1.0,
    "neutral": 0.0,
    "dovish": 1.0,
    "positive": 1.0,
}


SCHEMAS: dict[str, type[_Event]] = {"news": NewsItem, "forums": ForumPost, "macro": MacroEvent}
TIME_COLUMNS = ["published_at", "time_stated"]
COLUMNS: dict[str, list[str]] = {
    kind: [name for name in model.model_fields if name not in TIME_COLUMNS] + TIME_COLUMNS
    for kind, model in SCHEMAS.items()
}


def publication_times(dates: pd.Series, stated: pd.Series) -> pd.Series:
    """``published_at`` (UTC) per event: the stated instant, else the end of its date in
    New York (a date-only event counts as published after that day's close)."""
    days = pd.to_datetime(dates).astype("datetime64[ns]")
    end_of_day = (days + pd.Timedelta(days=1)).dt.tz_localize(NEW_YORK).dt.tz_convert("UTC")
    given = pd.to_datetime(stated, utc=True).astype("datetime64[ns, UTC]")
    return given.where(given.notna(), end_of_day).astype("datetime64[ns, UTC]")


def events_frame(kind: EventKind, events: Iterable[_Event]) -> pd.DataFrame:
    """A frame of validated events (``date`` as datetime64, ``published_at`` UTC,
    ``time_stated``), sorted by date then publication time."""
    rows = [e.model_dump() for e in events]
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS[kind] if c != "time_stated"])
    frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
    frame["time_stated"] = frame["published_at"].notna().astype(bool)
    frame["published_at"] = publication_times(frame["date"], frame["published_at"])
    return sort_events(frame[COLUMNS[kind]])


def sort_events(frame: pd.DataFrame) -> pd.DataFrame:
    """Events by date, then publication time (stable), with a fresh index."""
    return frame.sort_values(["date", "published_at"], kind="stable").reset_index(drop=True)


@lru_cache(maxsize=3)
def _empty(kind: EventKind) -> pd.DataFrame:
    return events_frame(kind, [])


def empty_events(kind: EventKind) -> pd.DataFrame:
    """A zero-row frame with the columns of ``kind`` (a fresh copy)."""
    return _empty(kind).copy()


def _clean(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if not (isinstance(v, float) and pd.isna(v))}


def parse_records(kind: EventKind, records: Iterable[tuple[str, Any]]) -> pd.DataFrame:
    """Validate ``(where, record)`` pairs; raise DataSourceError at the first bad one."""
    model = SCHEMAS[kind]
    events = []
    for where, record in records:
        if not isinstance(record, dict):
            raise DataSourceError(f"{where}: expected a JSON object, got {type(record).__name__}")
        try:
            events.append(model.model_validate(_clean(record)))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'row'}: {e['msg']} (got {e.get('input')!r})"
                for e in exc.errors()
            )
            raise DataSourceError(
                f"{where}: invalid {kind} row: {problems}. Fix or remove the row."
            ) from None
        except ValueError as exc:
            raise DataSourceError(f"{where}: invalid {kind} row: {exc}") from None
    return events_frame(kind, events)


def read_events_file(kind: EventKind, path: Path) -> pd.DataFrame:
    """Validated events of ``kind`` from one JSONL or CSV file."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        try:
            raw = pd.read_csv(path, dtype=str, keep_default_na=False)
        except Exception as exc:
            raise DataSourceError(f"cannot read {path}: {exc}") from exc
        records = (
            (f"{path}:{i + 2}", {k: v for k, v in row.items() if v != ""})
            for i, row in enumerate(raw.to_dict("records"))
        )
        return parse_records(kind, records)

    def jsonl() -> Iterable[tuple[str, Any]]:
        with path.open(encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield f"{path}:{lineno}", json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataSourceError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None

    return parse_records(kind, jsonl())


FILE_STEMS: dict[str, tuple[str, ...]] = {
    "news": ("news",),
    "forums": ("forums", "forum_posts"),
    "macro": ("macro", "macro_events"),
}


def load_events(folder: Path | str, kind: EventKind) -> pd.DataFrame:
    """Every ``kind`` event in ``folder`` (``<stem>.jsonl`` / ``<stem>.csv``); empty when none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataSourceError(f"text folder {folder} is not a folder (set STOCKER_TEXT_DIR)")
    frames = [
        read_events_file(kind, folder / f"{stem}{suffix}")
        for stem in FILE_STEMS[kind]
        for suffix in (".jsonl", ".csv")
        if (folder / f"{stem}{suffix}").is_file()
    ]
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_events(kind)
    return sort_events(pd.concat(frames, ignore_index=True).drop_duplicates())


@dataclass(frozen=True)
class TextEvents:
    """The three text event frames (full history; filter with ``point_in_time``)."""

    news: pd.DataFrame
    forums: pd.DataFrame
    macro: pd.DataFrame

    @classmethod
    def empty(cls) -> TextEvents:
        return cls(empty_events("news"), empty_events("forums"), empty_events("macro"))

    def for_ticker(self, ticker: str) -> TextEvents:
        """News and forum posts of ``ticker`` only (macro events are global)."""
        return TextEvents(
            self.news.loc[self.news["ticker"] == ticker].reset_index(drop=True),
            self.forums.loc[self.forums["ticker"] == ticker].reset_index(drop=True),
            self.macro,
        )


def load_text_folder(folder: Path | str | None) -> TextEvents:
    """All three kinds from ``folder``; empty frames when ``folder`` is None."""
    if folder is None:
        return TextEvents.empty()
    return TextEvents(
        load_events(folder, "news"), load_events(folder, "forums"), load_events(folder, "macro")
    )


NewsDownload = Callable[[str], list[dict[str, Any]]]


def _yfinance_download(ticker: str) -> list[dict[str, Any]]:  # pragma: no cover - network
    import yfinance as yf

    return list(yf.Ticker(ticker).news or [])


def _news_record(ticker: str, item: dict[str, Any]) -> dict[str, Any] | None:
    content = item.get("content") if isinstance(item.get("content"), dict) else item
    title = content.get("title")
    when = content.get("pubDate") or content.get("displayTime") or item.get("providerPublishTime")
    if not title or when is None:
        return None
    provider = content.get("provider")
    source = provider.get("displayName", "") if isinstance(provider, dict) else ""
    source = source or item.get("publisher", "") or ""
    url = (
        content.get("canonicalUrl", {}).get("url")
        if isinstance(content.get("canonicalUrl"), dict)
        else item.get("link")
    )
    return {"ticker": ticker, "date": when, "headline": title, "source": source, "url": url}


def fetch_yfinance_news(ticker: str, download: NewsDownload | None = None) -> pd.DataFrame:
    """Recent headlines for ``ticker`` from yfinance (both old and new item layouts).

    ``download(ticker) -> list[dict]`` defaults to ``yfinance.Ticker(t).news``; items
    without a title or time are skipped, and a failing download raises DataSourceError.
    """
    ticker = validate_ticker(ticker)
    try:
        items = (download or _yfinance_download)(ticker)
    except Exception as exc:
        raise DataSourceError(f"yfinance news for {ticker} failed: {exc}") from exc
    records = []
    for i, item in enumerate(items or []):
        record = _news_record(ticker, item) if isinstance(item, dict) else None
        if record is not None:
            records.append((f"yfinance news item {i}", record))
    return parse_records("news", records)
