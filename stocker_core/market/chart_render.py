"""One chart window and how it looks: the mplfinance reference drawing.

``ChartWindow`` holds the data of one image (≤ 60 bars, SMAs, title). Two ways
to draw it share the ``mplfinance.plot`` arguments (``mpf_kwargs``) and our layout
over mplfinance's figure (``decorate``: margins, legend row, date ticks):

- ``reference_png`` (here) — the straightforward way: a new mplfinance figure and
  ``savefig`` per chart (used by tests and the benchmark as the baseline);
- ``chart_template.ChartTemplate`` — a figure built once per layout and updated in
  place per chart. Same look, several times faster.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, Formatter
from PIL import Image

CHART_PX = 768
CHART_DPI = 100
WINDOW_BARS = 60
MPF_STYLE = "yahoo"
SMA_COLORS = {"sma20": "#1f77b4", "sma50": "#ff7f0e"}
SMA_WIDTH = 1.0
TITLE_Y = 0.95  # figure fraction; leaves room for a second title line
CLOSE_COLOR = "#202020"
# plotting area in figure fractions: the price axis and its labels are on the right,
# dates below in one or two lines, the legend row between the title and the plot
AX_LEFT, AX_RIGHT, AX_BOTTOM, AX_TOP = 0.03, 0.875, 0.075, 0.85
VOLUME_SHARE = 0.26  # of the plotting height, for the volume panel
X_TICKS = 6  # date labels per chart at most, the decision day always one of them
Y_LABEL_PX = 74  # price/volume axis titles this far right of the plot: clear of 8-character prices
LEGEND_FONT = 9
PNG_COMPRESS_LEVEL = 1


class _IndexLabelFormatter(Formatter):
    """Bar index -> its date label (what mplfinance's IntegerIndexDateTimeFormatter shows)."""

    def __init__(self) -> None:
        self.labels: list[str] = []

    def __call__(self, x: float, pos: int | None = None) -> str:
        ix = int(np.round(x))
        return self.labels[ix] if 0 <= ix < len(self.labels) else ""


@dataclass(frozen=True)
class ChartWindow:
    """The data of one chart: up to 60 bars ending on ``day``, oldest first."""

    ticker: str
    day: pd.Timestamp
    bars: pd.DataFrame  # columns date, open, high, low, close, volume
    sma20: np.ndarray
    sma50: np.ndarray
    title: str
    kind: str  # "candle" or "line" (close-only data)

    @cached_property
    def has_volume(self) -> bool:
        """Whether any bar has a positive volume (asked several times per chart: cached)."""
        volume = self.bars["volume"].to_numpy(dtype="float64")
        return bool((volume > 0).any())

    @property
    def layout(self) -> tuple[str, int, bool]:
        """What decides the figure's structure: kind, bar count, volume panel."""
        return (self.kind, len(self.bars), self.has_volume)


def tick_positions(n: int) -> list[int]:
    """Bar indices that get a date label: every ``ceil(n / X_TICKS)``-th bar counted back
    from the last one (the decision day), so that day is always labelled and a short
    window never repeats a date."""
    if n <= 0:
        return []
    step = max(1, math.ceil(n / X_TICKS))
    return list(range(n - 1, -1, -step))[::-1]


def tick_labels(dates: pd.DatetimeIndex, ticks: list[int]) -> list[str]:
    """Label per bar (empty where no tick): ``Mar 02``; the first tick, a tick in a new
    year and the decision day also carry the year on a second line."""
    labels = [""] * len(dates)
    previous_year = None
    for position, ix in enumerate(ticks):
        day = dates[ix]
        text = day.strftime("%b %d")
        if position == 0 or day.year != previous_year or ix == len(dates) - 1:
            text += day.strftime("\n%Y")
        labels[ix] = text
        previous_year = day.year
    return labels


def _legend_handles(kind: str) -> tuple[list[Line2D], list[str]]:
    handles = [Line2D([], [], color=CLOSE_COLOR, linewidth=1.5)] if kind == "line" else []
    labels = ["Close"] if kind == "line" else []
    for name, label in (("sma20", "SMA 20"), ("sma50", "SMA 50")):
        handles.append(Line2D([], [], color=SMA_COLORS[name], linewidth=2 * SMA_WIDTH))
        labels.append(label)
    return handles, labels


def decorate(fig: Any, axes: list, kind: str, has_volume: bool, n: int) -> tuple[Any, _IndexLabelFormatter]:
    """Our layout over mplfinance's figure: narrow margins, a legend row, date ticks that
    always include the decision day (bold, with its year), horizontal labels. Returns the
    legend and the formatter whose ``labels`` each chart sets."""
    width = AX_RIGHT - AX_LEFT
    if has_volume:
        volume_height = (AX_TOP - AX_BOTTOM) * VOLUME_SHARE
        main = [AX_LEFT, AX_BOTTOM + volume_height, width, AX_TOP - AX_BOTTOM - volume_height]
        for each in axes[2:4]:
            each.set_position([AX_LEFT, AX_BOTTOM, width, volume_height])
    else:
        main = [AX_LEFT, AX_BOTTOM, width, AX_TOP - AX_BOTTOM]
    for each in axes[:2]:
        each.set_position(main)
    bottom = axes[2] if has_volume else axes[0]
    ticks = tick_positions(n)
    formatter = _IndexLabelFormatter()
    for each in axes:
        each.xaxis.set_major_locator(FixedLocator(ticks))
        each.xaxis.set_major_formatter(formatter)
    label_x = 1 + Y_LABEL_PX / (width * CHART_PX)  # fixed: no tick-label measuring per draw
    for each in axes[::2]:
        each.yaxis.set_label_coords(label_x, 0.5)
    bottom.tick_params(axis="x", labelrotation=0)
    for position, tick in enumerate(bottom.xaxis.get_major_ticks(len(ticks))):
        tick.label1.set_horizontalalignment("center")
        tick.label1.set_fontweight("bold" if position == len(ticks) - 1 else "normal")
    handles, labels = _legend_handles(kind)
    legend = fig.legend(
        handles,
        labels,
        loc="lower right",
        bbox_to_anchor=(AX_RIGHT, AX_TOP),
        ncol=len(labels),
        frameon=False,
        fontsize=LEGEND_FONT,
        borderaxespad=0.1,
        handlelength=1.6,
        columnspacing=1.2,
    )
    return legend, formatter


LegendEntry = tuple[Any, Any]
"""(line artist, text artist) of one legend entry."""


def legend_entries(legend: Any) -> list[LegendEntry]:
    """A matplotlib legend's (handle, text) pairs."""
    return list(zip(legend.legend_handles, legend.get_texts(), strict=True))


def show_drawn_smas(entries: list[LegendEntry], kind: str, sma20: np.ndarray, sma50: np.ndarray) -> None:
    """Legend entries only for SMAs with at least one value (none before 20/50 bars)."""
    first = 1 if kind == "line" else 0
    for offset, values in enumerate((sma20, sma50)):
        shown = bool(np.isfinite(values).any())
        for artist in entries[first + offset]:
            artist.set_visible(shown)


def mpf_frame(bars: pd.DataFrame) -> pd.DataFrame:
    frame = bars.set_index(pd.DatetimeIndex(bars["date"]))[["open", "high", "low", "close"]]
    frame = frame.rename(columns=str.capitalize)
    frame["Volume"] = bars["volume"].to_numpy()
    if frame[["Open", "High", "Low"]].isna().all().all():  # close-only: mplfinance needs OHLC
        for col in ("Open", "High", "Low"):
            frame[col] = frame["Close"]
    return frame


def mpf_kwargs(window: ChartWindow) -> dict[str, Any]:
    """The ``mplfinance.plot`` arguments shared by the reference and the template."""
    import mplfinance as mpf

    addplots = [
        mpf.make_addplot(
            np.asarray(values, dtype="float64"),
            color=SMA_COLORS[name],
            width=SMA_WIDTH,
            secondary_y=False,
        )
        for name, values in (("sma20", window.sma20), ("sma50", window.sma50))
        if not np.isnan(values).all()
    ]
    kwargs: dict[str, Any] = {
        "type": window.kind,
        "style": MPF_STYLE,
        "volume": window.has_volume,
        # the style asks for "semibold", which DejaVu Sans renders as bold after a warning
        "title": {"title": window.title, "y": TITLE_Y, "weight": "bold"},
        "figsize": (CHART_PX / CHART_DPI, CHART_PX / CHART_DPI),
        "ylabel": "Close" if window.kind == "line" else "Price",
        "warn_too_much_data": 10_000,
    }
    if window.kind == "line":
        kwargs["linecolor"] = CLOSE_COLOR
    if addplots:
        kwargs["addplot"] = addplots
    return kwargs


def reference_png(window: ChartWindow) -> bytes:
    """The straightforward rendering: a new mplfinance figure and ``savefig``."""
    import matplotlib.pyplot as plt
    import mplfinance as mpf

    buf = io.BytesIO()
    with matplotlib.rc_context():
        fig, axes = mpf.plot(mpf_frame(window.bars), **mpf_kwargs(window), returnfig=True)
        try:
            legend, formatter = decorate(fig, axes, window.kind, window.has_volume, len(window.bars))
            show_drawn_smas(legend_entries(legend), window.kind, window.sma20, window.sma50)
            dates = pd.DatetimeIndex(window.bars["date"])
            formatter.labels = tick_labels(dates, tick_positions(len(dates)))
            fig.savefig(buf, dpi=CHART_DPI, metadata={"Software": None})
        finally:
            plt.close(fig)
    return buf.getvalue()


def encode_png(rgba: np.ndarray, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """PNG bytes of an RGBA buffer (stored as RGB: the figure is opaque), no metadata."""
    buf = io.BytesIO()
    height, width = rgba.shape[:2]
    image = Image.frombuffer("RGBA", (width, height), np.ascontiguousarray(rgba), "raw", "RGBA", 0, 1)
    image.convert("RGB").save(buf, format="png", compress_level=compress_level)
    return buf.getvalue()
