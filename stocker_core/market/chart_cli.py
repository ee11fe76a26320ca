"""``stocker chart TICKER DATE -o out.png``: render one chart image."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import fail
from stocker_core.config import Settings, get_settings
from stocker_core.errors import StockerError

if TYPE_CHECKING:
    import pandas as pd

HISTORY_DAYS = 200  # calendar days before DATE to read: 60 sessions + SMA50 lookback


commands = typer.Typer()
"""What this area adds to ``stocker``: ``chart``."""


def bars_for_chart(settings: Settings, ticker: str, day: date) -> pd.DataFrame:
    """Bars of ``ticker`` around ``day`` with history for the SMAs."""
    # a few days past DATE so a non-session DATE is told apart from one after the data
    # (the chart itself never shows a bar after DATE)
    from stocker_core.market.bars import load_bars

    start, end = day - timedelta(days=HISTORY_DAYS), day + timedelta(days=10)
    return load_bars(settings, ticker, start, end)[0]


def _outside_data(settings: Settings, ticker: str, day: date) -> str | None:
    """Why ``day`` has no chart when no bar of ``ticker`` lies near it: the range it has."""
    from stocker_core.market.bars import configured_source

    try:
        info = configured_source(settings).symbol_info(ticker)
    except StockerError:
        return None  # an unknown symbol: the loader's own error says so
    if day > info.last_date:
        return f"{ticker} has bars up to {info.last_date}; pick a date on or before it"
    if day < info.first_date:
        return f"{ticker} has bars from {info.first_date}; pick a date on or after it"
    return None


def output_file(output: Path, ticker: str, day: date) -> Path:
    """``output`` itself when it names a file (``out.png``), else ``<output>/<TICKER>_<DATE>.png``
    (an existing folder, or a path without a file extension such as ``charts/``)."""
    if output.is_dir() or not output.suffix:
        return output / f"{ticker}_{day.isoformat()}.png"
    return output


@commands.command("chart")
def chart(
    ticker: str = typer.Argument(..., metavar="TICKER", help="Symbol, e.g. GOOGL, AAPL or GC=F"),
    day: str = typer.Argument(..., metavar="DATE", help="Trading day, YYYY-MM-DD"),
    output: Path = typer.Option(
        Path("chart.png"),
        "-o",
        "--output",
        help="PNG file to write, or a folder (no extension): then <folder>/<TICKER>_<DATE>.png",
    ),
) -> None:
    """Render the 768×768 chart of TICKER's 60 trading days up to DATE."""
    from stocker_core.market.charts import render_chart
    from stocker_core.market.validation import validate_day, validate_ticker

    settings = get_settings()
    try:
        validate_ticker(ticker)
        when = validate_day(day)  # a far day (9999-12-31, 0001-01-01) is bad input, not an overflow
        bars = bars_for_chart(settings, ticker, when)
        if bars.empty:
            fail(_outside_data(settings, ticker, when) or f"no bars for {ticker} around {when}")
        png = render_chart(bars, ticker, when)
    except StockerError as exc:
        fail(exc)
    target = output_file(output, ticker, when)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    typer.echo(f"wrote {target} (768x768) for {ticker} {when.isoformat()}")
