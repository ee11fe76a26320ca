"""``stocker chart TICKER DATE -o out.png``: render one chart image."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stocker_core.cli_support import fail
from stocker_core.config import Settings
from stocker_core.errors import StockerError

if TYPE_CHECKING:
    import pandas as pd

HISTORY_DAYS = 200  # calendar days before DATE to read: 60 sessions + SMA50 lookback


def bars_for_chart(settings: Settings, ticker: str, day: date) -> pd.DataFrame:
    """Bars of ``ticker`` around ``day`` with history for the SMAs."""
    # a few days past DATE so a non-session DATE is told apart from one after the data
    # (the chart itself never shows a bar after DATE)
    from stocker_core.market.bars import load_bars

    start, end = day - timedelta(days=HISTORY_DAYS), day + timedelta(days=10)
    return load_bars(settings, ticker, start, end)[0]


def chart(
    ticker: str = typer.Argument(..., help="Symbol, e.g. AAPL or GC=F"),
    day: str = typer.Argument(..., metavar="DATE", help="Trading day, YYYY-MM-DD"),
    output: Path = typer.Option(Path("chart.png"), "-o", "--output", help="PNG file to write"),
) -> None:
    """Render the 768×768 chart of TICKER's 60 trading days up to DATE."""
    from stocker_core.market.charts import render_chart
    from stocker_core.market.validation import validate_ticker

    try:
        validate_ticker(ticker)
        try:
            when = date.fromisoformat(day)
        except ValueError:
            raise typer.BadParameter(f"{day!r} is not a date: use YYYY-MM-DD") from None
        bars = bars_for_chart(Settings(), ticker, when)
        png = render_chart(bars, ticker, when)
    except StockerError as exc:
        fail(exc)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(png)
    typer.echo(f"wrote {output} (768x768) for {ticker} {when.isoformat()}")


def register(app: typer.Typer) -> None:
    """Add the ``chart`` command to the ``stocker`` app."""
    app.command("chart")(chart)
