"""The chart PNG of a day for the web page: the stored file when the charts asset drew it, else
(charts on demand: ``STOCKER_CHARTS=on_demand``, or ``auto`` with a text-only council) drawn
now from the stored bars and kept in the charts folder, where the next request finds it —
as the environment's observation draws a chart it does not have."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from stocker_core.config import Settings
from stocker_core.errors import StockerError
from stocker_core.web.errors import NotFoundError
from stocker_core.web.reader import WarehouseReader

CHART_FILE_MODE = 0o644


def charts_on_demand(settings: Settings) -> bool:
    """Whether a missing chart is drawn when asked (the charts asset does not draw every day)."""
    return not settings.charts_eager


def day_chart(settings: Settings, reader: WarehouseReader, ticker: str, day: date) -> Path:
    """The chart file of ``ticker`` on ``day``: this home's charts folder, else the path
    ``market.charts`` recorded, else (on demand) drawn now and written to the charts folder.
    NotFoundError when there is none and charts are not drawn on demand, or ``day`` has no bar."""
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
    if charts_on_demand(settings):
        return draw_and_store(settings, ticker, day, local)
    if len(row):
        raise NotFoundError(f"the chart file of {ticker} on {day} is missing: re-materialize charts")
    raise NotFoundError(f"no chart of {ticker} on {day}: materialize the charts partition first")


def draw_and_store(settings: Settings, ticker: str, day: date, target: Path) -> Path:
    """Draw the chart of ``ticker`` on ``day`` from its bars and write it atomically to ``target``."""
    from stocker_core.atomic_files import write_bytes_atomic
    from stocker_core.market.chart_cli import bars_for_chart
    from stocker_core.market.charts import render_chart

    try:
        bars = bars_for_chart(settings, ticker, day)
        if bars.empty:
            raise NotFoundError(f"no chart of {ticker} on {day}: no stored bars around that day")
        png = render_chart(bars, ticker, day)
    except NotFoundError:
        raise
    except StockerError as exc:  # a day without a bar (weekend, holiday, past the data)
        raise NotFoundError(f"no chart of {ticker} on {day}: {exc}") from None
    write_bytes_atomic(target, png, CHART_FILE_MODE)
    return target


def _recorded(settings: Settings, stored: str) -> Path | None:
    """The file ``market.charts`` recorded (relative to the home; an absolute path of a home
    this one was copied from is re-anchored here: ``home_paths.resolve_path``), when it is
    there and a ``.png``; else None."""
    from stocker_core.warehouse.home_paths import resolve_path

    path = resolve_path(stored, settings.home)
    return path if path is not None and path.suffix == ".png" and path.is_file() else None
