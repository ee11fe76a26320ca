"""The ticker universe file: one validated symbol per line."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from stocker_core.atomic_files import write_text_atomic
from stocker_core.config import Settings
from stocker_core.errors import InvalidNameError
from stocker_core.market.validation import validate_ticker

LIST_FILE_LIMIT = 1_000_000
"""The largest ticker list file read (bytes): tens of thousands of lines, never a stray dump."""


@dataclass
class TickerList:
    """The tickers of a list file, in order, once each; ``duplicates`` names the lines that
    repeated an earlier one (``universe.txt:7: AAPL (again, first on line 2)``)."""

    tickers: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)


def read_ticker_list(path: Path) -> TickerList:
    """One ticker a line; blank lines and ``#`` comments ignored. The whole file is checked
    before anything is used: an invalid line (path-like, SQL-like, lower-case, too long)
    raises InvalidNameError naming ``file:line``; so does a file that is missing, not a
    regular file, over ``LIST_FILE_LIMIT`` or not UTF-8."""
    path = Path(path)
    if not path.is_file():
        raise InvalidNameError(f"{path}: no such ticker list file (one ticker a line)")
    if path.stat().st_size > LIST_FILE_LIMIT:
        raise InvalidNameError(f"{path}: over {LIST_FILE_LIMIT:,} bytes; is this a ticker list?")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidNameError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    found = TickerList()
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        symbol = line.split("#", 1)[0].strip()
        if not symbol:
            continue
        try:
            validate_ticker(symbol)
        except InvalidNameError as exc:
            raise InvalidNameError(f"{path}:{number}: {exc}") from None
        if symbol in first_line:
            found.duplicates.append(
                f"{path.name}:{number}: {symbol} (again, first on line {first_line[symbol]})"
            )
            continue
        first_line[symbol] = number
        found.tickers.append(symbol)
    if not found.tickers:
        raise InvalidNameError(f"{path}: no tickers in it (one a line; # starts a comment)")
    return found


def read_universe(settings: Settings) -> list[str]:
    """Registered tickers; the defaults (``STOCKER_DEFAULT_TICKERS``) when no file exists.

    Blank lines and ``#`` comments are ignored; an invalid line raises InvalidNameError
    naming the file.
    """
    path = settings.universe_path
    if not path.exists():
        return [validate_ticker(t) for t in settings.default_tickers]
    tickers: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        symbol = line.split("#", 1)[0].strip()
        if not symbol:
            continue
        try:
            tickers.append(validate_ticker(symbol))
        except ValueError as exc:
            raise type(exc)(f"{path}:{number}: {exc}") from None
    return list(dict.fromkeys(tickers))


def write_universe(settings: Settings, tickers: Iterable[str]) -> list[str]:
    """Atomically replace the universe file; returns the stored list."""
    cleaned = list(dict.fromkeys(validate_ticker(t) for t in tickers))
    write_text_atomic(settings.universe_path, "".join(f"{t}\n" for t in cleaned))
    return cleaned


def add_tickers(settings: Settings, tickers: Iterable[str]) -> list[str]:
    """Add tickers (validated first: nothing is written if any is invalid)."""
    new = [validate_ticker(t) for t in tickers]
    return write_universe(settings, [*read_universe(settings), *new])


def remove_tickers(settings: Settings, tickers: Iterable[str]) -> list[str]:
    """Remove tickers from the universe file (stored data is kept)."""
    gone = {validate_ticker(t) for t in tickers}
    return write_universe(settings, [t for t in read_universe(settings) if t not in gone])
