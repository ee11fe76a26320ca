"""The chart PNG of a day for the web page: the stored file when the charts asset drew it, else
(charts on demand: ``STOCKER_CHARTS=on_demand``, or ``auto`` with a text-only council) drawn
now from the bars and kept in the server's memory (``ChartMemory``), never written: the servers
only read the home. Only the tickers the home is about are drawn (``drawable``)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from stocker_core.config import Settings
from stocker_core.errors import StockerError
from stocker_core.web.chart_memory import ChartMemory
from stocker_core.web.errors import NotFoundError
from stocker_core.web.reader import WarehouseReader


def charts_on_demand(settings: Settings) -> bool:
    """Whether a missing chart is drawn when asked (the charts asset does not draw every day)."""
    return not settings.charts_eager


def drawable(settings: Settings, reader: WarehouseReader, ticker: str) -> bool:
    """Whether the page may draw ``ticker``'s charts: a ticker of the universe, the benchmark,
    a reference task's ticker, or one whose bars the warehouse stores (an episode it holds)."""
    from stocker_core.env.tasks import TASKS
    from stocker_core.universe import read_universe

    if ticker == settings.benchmark or ticker in {t.ticker for t in TASKS.values()}:
        return True
    if ticker in read_universe(settings):
        return True
    stored = reader.frame(
        "SELECT 1 AS one FROM market.prices WHERE ticker = ? LIMIT 1", [ticker], needs=["market.prices"]
    )
    return len(stored) > 0


def day_chart(
    settings: Settings, reader: WarehouseReader, memory: ChartMemory, ticker: str, day: date
) -> Path | bytes:
    """The chart of ``ticker`` on ``day``: this home's charts file, else the file ``market.charts``
    recorded, else (on demand, a ``drawable`` ticker) the PNG drawn now, kept in ``memory``.
    NotFoundError when there is none and charts are not drawn on demand, the ticker is not
    drawable, or ``day`` has no bar."""
    from stocker_core.market.charts import chart_path

    local = chart_path(settings.charts_dir, ticker, day)
    if local.is_file():
        return local
    row = reader.frame(
        "SELECT path FROM market.charts WHERE ticker = ? AND date = ?", [ticker, day], needs=["market.charts"]
    )
    recorded = _recorded(settings, str(row["path"].iloc[0])) if len(row) else None
    if recorded is not None:
        return recorded
    if not charts_on_demand(settings):
        if len(row):
            raise NotFoundError(f"the chart file of {ticker} on {day} is missing: re-materialize charts")
        raise NotFoundError(f"no chart of {ticker} on {day}: materialize the charts partition first")
    kept = memory.get(ticker, day)
    if kept is not None:
        return kept
    if not drawable(settings, reader, ticker):
        raise NotFoundError(
            f"no chart of {ticker} on {day}: the page draws the universe's tickers, the benchmark "
            f"({settings.benchmark}), the reference tasks' and those with stored bars"
        )
    png = draw(settings, ticker, day)
    memory.put(ticker, day, png)
    return png


def draw(settings: Settings, ticker: str, day: date) -> bytes:
    """The chart of ``ticker`` on ``day`` drawn from its bars (the charts asset's drawing)."""
    from stocker_core.market.chart_cli import bars_for_chart
    from stocker_core.market.charts import render_chart

    try:
        bars = bars_for_chart(settings, ticker, day)
        if bars.empty:
            raise NotFoundError(f"no chart of {ticker} on {day}: no stored bars around that day")
        return render_chart(bars, ticker, day)
    except NotFoundError:
        raise
    except StockerError as exc:  # a day without a bar (weekend, holiday, past the data)
        raise NotFoundError(f"no chart of {ticker} on {day}: {exc}") from None


def _recorded(settings: Settings, stored: str) -> Path | None:
    """The file ``market.charts`` recorded (relative to the home; an absolute path of a home
    this one was copied from is re-anchored here: ``home_paths.resolve_path``), when it is
    there and a ``.png``; else None."""
    from stocker_core.warehouse.home_paths import resolve_path

    path = resolve_path(stored, settings.home)
    return path if path is not None and path.suffix == ".png" and path.is_file() else None
