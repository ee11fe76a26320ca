"""Bars from a folder of CSV/Parquet files, long (a ticker/symbol column) or per symbol.

Each file is read on its own: a bad file (0 bytes, header only, no close column,
unparsable) is reported by name with the reason (``file_problems``) and the symbols of
the other files stay available. Asking for a symbol that only a bad file would have
provided raises an error naming that file.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from stocker_core.errors import DataSourceError, UnknownTickerError
from stocker_core.market.frames import PRICE_COLUMNS, BarIssue, canonical_column, normalize_bars_checked
from stocker_core.market.table_source import TableSource
from stocker_core.market.validation import TICKER_PATTERN

BAR_SUFFIXES = {".csv", ".parquet", ".pq"}


class UnreadableSymbolError(UnknownTickerError, DataSourceError):
    """A symbol is missing and some bar files could not be read (they are named)."""


class BadBarFile(Exception):
    """Internal: why one file cannot be used (its message names the reason)."""


def _read_table(path: Path) -> pd.DataFrame:
    if path.stat().st_size == 0:
        raise BadBarFile("empty file (0 bytes)")
    try:
        if path.suffix.lower() == ".csv":  # only blank cells are missing: "n/a" is text, named
            return pd.read_csv(path, keep_default_na=False, na_values=[""])
        return pd.read_parquet(path)
    except Exception as exc:  # any parser failure: the file is reported, never a traceback
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadBarFile(f"cannot parse ({first_line[:120]})") from None


def _bar_columns(table: pd.DataFrame) -> list[str]:
    return [canonical_column(c) for c in table.columns]


def _check_bar_table(path: Path, table: pd.DataFrame) -> bool:
    """True for a usable bar table, False for another kind of table (ignored);
    BadBarFile for a bar table that cannot be used."""
    columns = _bar_columns(table)
    looks_like_bars = any(c in PRICE_COLUMNS for c in columns)
    if not looks_like_bars:
        if len(table):
            return False  # e.g. a task list: not bars
        raise BadBarFile(f"no date/close columns and no rows (columns: {', '.join(columns) or 'none'})")
    if len(table) == 0:
        raise BadBarFile("header only, no rows")
    for needed in ("date", "close"):
        if needed not in columns:
            raise BadBarFile(f"no {needed} column (columns: {', '.join(columns)})")
    if "ticker" not in columns and not TICKER_PATTERN.fullmatch(path.stem):
        raise BadBarFile(f"no ticker/symbol column and the file name {path.stem!r} is not a ticker")
    return True


@dataclass
class BarFolder:
    """Every symbol's parts, their raw-data issues, and the files that could not be used."""

    parts: dict[str, list[pd.DataFrame]] = field(default_factory=dict)
    issues: dict[str, list[BarIssue]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def note(self, path: Path, problem: str) -> None:
        """Record why (part of) ``path`` was not used."""
        known = self.problems.get(path.name)
        self.problems[path.name] = f"{known}; {problem}" if known else problem

    def add(self, ticker: str, path: Path, table: pd.DataFrame) -> None:
        checked = normalize_bars_checked(table)
        if checked.frame.empty:  # every row refused (e.g. all dates day/month-ambiguous): named
            why = checked.issues[0].problem if checked.issues else "no row with a date and a close"
            self.note(path, f"{ticker}: no usable rows ({why})")
            return
        self.parts.setdefault(ticker, []).append(checked.frame)
        self.issues.setdefault(ticker, []).extend(
            BarIssue(
                i.date,
                i.column,
                f"{path.name}: {i.problem}" if i.date is None or i.column == "date" else i.problem,
            )
            for i in checked.issues
        )


def _header_rows(table: pd.DataFrame) -> list[int]:
    """Positions of data rows that repeat the header (files pasted together)."""
    text = table.astype("string").apply(lambda c: c.str.strip().str.lower())
    names = [str(c).strip().lower() for c in table.columns]
    same = pd.concat([text.iloc[:, i] == names[i] for i in range(len(names))], axis=1).fillna(False)
    return [int(i) for i in np.flatnonzero(same.all(axis=1).to_numpy())]


def _add_file(folder: BarFolder, path: Path) -> None:
    table = _read_table(path)
    if not _check_bar_table(path, table):
        return
    repeated = _header_rows(table)
    if repeated:
        rows = ", ".join(str(r + 1) for r in repeated[:5])
        raise BadBarFile(f"row {rows} repeats the header (files pasted together?): remove it")
    table.columns = _bar_columns(table)
    table = table.loc[:, ~pd.Index(table.columns).duplicated()]
    if "ticker" not in table.columns:
        folder.add(path.stem, path, table)
        return
    symbols = table["ticker"].astype(str).str.strip()
    bad = sorted({s for s in symbols.unique() if not TICKER_PATTERN.fullmatch(s)})
    for name in bad[:5]:
        rows = np.flatnonzero((symbols == name).to_numpy())
        shown = ", ".join(str(r + 1) for r in rows[:3]) + (" …" if len(rows) > 3 else "")
        folder.note(path, f"{len(rows)} row(s) with the invalid ticker {name!r} skipped (row {shown})")
    if len(bad) > 5:
        folder.note(path, f"and {len(bad) - 5} more invalid tickers skipped")
    for ticker, group in table.groupby(symbols, sort=True):
        if ticker not in bad:
            folder.add(str(ticker), path, group.drop(columns="ticker"))


def read_bar_folder(folder: Path) -> BarFolder:
    """Read every CSV/Parquet file of ``folder`` independently."""
    if not folder.is_dir():
        raise DataSourceError(f"STOCKER_FILES_DIR {folder} is not a folder")
    found = BarFolder()
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in BAR_SUFFIXES or not path.is_file():
            continue
        try:
            _add_file(found, path)
        except BadBarFile as exc:
            found.problems[path.name] = str(exc)
        except DataSourceError as exc:
            found.problems[path.name] = str(exc)
    return found


@dataclass(frozen=True)
class _ParsedFolder:
    """What ``FilesSource`` makes of a folder: each symbol's merged frame, the raw-data issues
    and the files that could not be used."""

    frames: dict[str, pd.DataFrame]
    issues: dict[str, list[BarIssue]]
    problems: dict[str, str]


PARSED_CACHE_SIZE = 8
"""How many folders' parses a process keeps (``_parse_folder``)."""

_parsed: OrderedDict[tuple[str, tuple[tuple[str, bytes], ...]], _ParsedFolder] = OrderedDict()
_parsed_lock = threading.Lock()


def _fingerprint(folder: Path) -> tuple[str, tuple[tuple[str, bytes], ...]] | None:
    """The folder and the name and content digest of each file ``read_bar_folder`` reads (the
    parse depends on nothing else); None when a file cannot be read (then nothing is cached)."""
    try:
        files = [p for p in sorted(folder.iterdir()) if p.suffix.lower() in BAR_SUFFIXES and p.is_file()]
        digests = tuple((p.name, hashlib.blake2b(p.read_bytes(), digest_size=20).digest()) for p in files)
        return str(folder.resolve()), digests
    except OSError:
        return None


def _parse_folder(folder: Path) -> _ParsedFolder:
    """The parse of ``folder``, reused while its bar files hold the same bytes: each ``stocker``
    step, asset run and backtest asks for the files source anew, and normalizing every symbol
    costs far more than reading the files to see that they are unchanged. The files are
    fingerprinted before and after the parse, so a folder written meanwhile is parsed again
    next time rather than served from a parse of other bytes."""
    before = _fingerprint(folder) if folder.is_dir() else None
    if before is not None:
        with _parsed_lock:
            found = _parsed.get(before)
            if found is not None:
                _parsed.move_to_end(before)
                return found
    read = read_bar_folder(folder)
    parsed = _ParsedFolder({t: _merge(parts) for t, parts in read.parts.items()}, read.issues, read.problems)
    if before is not None and _fingerprint(folder) == before:
        with _parsed_lock:
            _parsed[before] = parsed
            while len(_parsed) > PARSED_CACHE_SIZE:
                _parsed.popitem(last=False)
    return parsed


def load_bar_folder(folder: Path) -> dict[str, pd.DataFrame]:
    """Every symbol's normalized frame from the bar files in ``folder`` (see ``FilesSource``)."""
    return FilesSource(folder)._frames


def _merge(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """One frame per symbol: richer (more OHLC) tables last, so their rows win on shared dates."""
    ordered = sorted(tables, key=lambda f: int(f["open"].notna().sum()))
    return normalize_bars_checked(pd.concat(ordered, ignore_index=True)).frame


class FilesSource(TableSource):
    """The ``files`` source: ``STOCKER_FILES_DIR`` holds the bars.

    A file with a ``ticker``/``symbol`` column is long format; otherwise the file stem is
    the symbol (``AAPL.csv``). Tables without price columns (task lists) are ignored.
    """

    name = "files"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        parsed = _parse_folder(self.folder)
        self._problems = dict(parsed.problems)
        # this source's own frames (shallow copies: with pandas' copy-on-write a change to one
        # never reaches the shared parse) and issue lists
        frames = {t: f.copy(deep=False) for t, f in parsed.frames.items()}
        if not frames:
            detail = "; ".join(f"{n}: {p}" for n, p in sorted(parsed.problems.items()))
            raise DataSourceError(
                f"no usable CSV/Parquet bar files with date and close columns in {self.folder}"
                + (f" ({detail})" if detail else "")
            )
        super().__init__(frames, {t: list(i) for t, i in parsed.issues.items()})

    def file_problems(self) -> dict[str, str]:
        """File name -> why it could not be used (empty when every bar file was read)."""
        return dict(self._problems)

    def _unknown(self, ticker: str) -> UnknownTickerError:
        if not self._problems:
            return super()._unknown(ticker)
        bad = "; ".join(f"{n}: {p}" for n, p in sorted(self._problems.items()))
        known = ", ".join(sorted(self._frames)[:30])
        return UnreadableSymbolError(
            f"the files source has no symbol {ticker!r}; unreadable file(s) in {self.folder}: {bad}; "
            f"it has: {known}"
        )
