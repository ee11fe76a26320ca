"""The ticker universe file: one validated symbol per line."""

from __future__ import annotations

from collections.abc import Iterable

from stocker_core.atomic_files import write_text_atomic
from stocker_core.config import Settings
from stocker_core.market.validation import validate_ticker


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
