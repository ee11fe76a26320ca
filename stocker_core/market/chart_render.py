"""Drawing one chart window: the mplfinance reference and a reusable fast figure.

``ChartWindow`` holds the data of one image (≤ 60 bars, SMAs, title). Two ways
to draw it share the same ``mplfinance.plot`` arguments:

- ``reference_png`` — the straightforward way: a new mplfinance figure and
  ``savefig`` per chart (used by tests and the benchmark as the baseline);
- ``ChartTemplate`` — an mplfinance figure built once per layout (kind, number of
  bars, volume panel or not) whose artists are then updated in place per chart and
  drawn on an Agg canvas; the RGBA buffer is PNG-encoded with Pillow at a low
  compression level. Same look, several times faster.
"""

from __future__ import annotations

import io
import math
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.collections import PolyCollection
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
_PROCESS_WIDE_RC = {"backend", "backend_fallback", "interactive"}  # never switched per chart


class _CachedTextRenderer(RendererAgg):
    """Agg renderer that rasterizes each distinct plain-text string once.

    Text is placed at whole pixels (matplotlib places it at 1/64 px), so a label's
    glyph bitmaps can be reused wherever it appears; charts share most labels
    (prices, dates, axis titles). Uses matplotlib 3.10+ Agg internals and falls back
    to the stock path if they change.
    """

    _broken = False

    def __init__(self, width: float, height: float, dpi: float) -> None:
        super().__init__(width, height, dpi)
        self._glyphs: dict[tuple, list[tuple[np.ndarray, int, int]]] = {}

    def _rasterize(self, s: str, prop: Any, angle: float, antialiased: bool) -> list:
        from matplotlib.backends.backend_agg import get_hinting_flag

        font = self._prepare_font(prop)
        size = prop.get_size_in_points()
        items = font._layout(s, flags=get_hinting_flag(), features=None, language=None)
        return self._render_items(
            [(item.ft_object, size, item.glyph_index, item.x, item.y) for item in items],
            angle,
            antialiased,
        )

    def _rasterize_math(self, s: str, prop: Any, angle: float, antialiased: bool) -> list:
        parse = self.mathtext_parser.parse(s, self.dpi, prop, antialiased=antialiased)
        if parse.rects:  # fraction bars etc.: leave to the stock path
            raise TypeError("mathtext with rules")
        return self._render_items(
            [(font, size, index, dx, dy) for font, size, _c, index, dx, dy in parse.glyphs],
            angle,
            antialiased,
        )

    def _render_items(self, items: list, angle: float, antialiased: bool) -> list:
        from matplotlib.backends.backend_agg import get_hinting_flag
        from matplotlib.ft2font import RenderMode

        flags = get_hinting_flag()
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        matrix = (0x10000 * np.array([[cos, -sin], [sin, cos]])).round().astype(int)
        mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
        out = []
        for font, size, index, dx, dy in items:
            font.set_size(size, self.dpi)
            font._set_transform(
                matrix, [round(0x40 * (dx * cos - dy * sin)), round(0x40 * (dx * sin + dy * cos))]
            )
            bitmap = font._render_glyph(index, flags, mode)
            buffer = np.array(bitmap.buffer, dtype=np.uint8, copy=True)
            if not antialiased:
                buffer *= 0xFF
            out.append((buffer, bitmap.left, bitmap.top))
        return out

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):  # noqa: D102
        if (
            ismath == "TeX"
            or self._broken
            or (mtext is not None and (mtext.get_fontfeatures() or mtext.get_language()))
        ):
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        key = (s, prop, angle, bool(gc.get_antialiased()), bool(ismath))
        glyphs = self._glyphs.get(key)
        if glyphs is None:
            rasterize = self._rasterize_math if ismath else self._rasterize
            try:
                glyphs = rasterize(s, prop, angle, bool(gc.get_antialiased()))
            except (AttributeError, TypeError, ImportError, ValueError):
                if not ismath:
                    type(self)._broken = True
                return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
            if len(self._glyphs) > 20_000:
                self._glyphs.clear()
            self._glyphs[key] = glyphs
        height = int(self.height)
        x0, y0 = round(x), height - round(y)  # whole pixels; y0 upwards like FreeType
        for buffer, left, top in glyphs:
            self._renderer.draw_text_image(buffer, x0 + left, height - (y0 + top) + buffer.shape[0], 0, gc)
        return None


class _IndexLabelFormatter(Formatter):
    """Bar index -> its date label (what mplfinance's IntegerIndexDateTimeFormatter shows)."""

    def __init__(self) -> None:
        self.labels: list[str] = []

    def __call__(self, x: float, pos: int | None = None) -> str:
        ix = int(np.round(x))
        return self.labels[ix] if 0 <= ix < len(self.labels) else ""


class _ChartCanvas(FigureCanvasAgg):
    """Agg canvas whose renderer caches rasterized text."""

    def get_renderer(self) -> RendererAgg:
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = _CachedTextRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


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


def _decorate(fig: Any, axes: list, kind: str, has_volume: bool, n: int) -> tuple[Any, _IndexLabelFormatter]:
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


def _show_drawn_smas(entries: list[LegendEntry], kind: str, sma20: np.ndarray, sma50: np.ndarray) -> None:
    """Legend entries only for SMAs with at least one value (none before 20/50 bars)."""
    first = 1 if kind == "line" else 0
    for offset, values in enumerate((sma20, sma50)):
        shown = bool(np.isfinite(values).any())
        for artist in entries[first + offset]:
            artist.set_visible(shown)


def _freeze_legend(fig: Any, legend: Any) -> list[LegendEntry]:
    """The legend as plain figure lines and texts where it laid them out (the figure is
    drawn once for that), so later draws skip its layout; the legend itself is removed."""
    fig.canvas.draw()
    to_figure = fig.transFigure.inverted()
    entries = []
    for handle, text in legend_entries(legend):
        xy = to_figure.transform(handle.get_transform().transform(handle.get_xydata()))
        line = Line2D(
            xy[:, 0],
            xy[:, 1],
            color=handle.get_color(),
            linewidth=handle.get_linewidth(),
            linestyle=handle.get_linestyle(),
            solid_capstyle=handle.get_solid_capstyle(),
            transform=fig.transFigure,
        )
        fig.add_artist(line)
        x, y = to_figure.transform(text.get_transform().transform(text.get_unitless_position()))
        label = fig.text(
            x,
            y,
            text.get_text(),
            fontproperties=text.get_fontproperties(),
            color=text.get_color(),
            ha=text.get_horizontalalignment(),
            va=text.get_verticalalignment(),
        )
        entries.append((line, label))
    legend.remove()
    return entries


def _mpf_frame(bars: pd.DataFrame) -> pd.DataFrame:
    frame = bars.set_index(pd.DatetimeIndex(bars["date"]))[["open", "high", "low", "close"]]
    frame = frame.rename(columns=str.capitalize)
    frame["Volume"] = bars["volume"].to_numpy()
    if frame[["Open", "High", "Low"]].isna().all().all():  # close-only: mplfinance needs OHLC
        for col in ("Open", "High", "Low"):
            frame[col] = frame["Close"]
    return frame


def _mpf_kwargs(window: ChartWindow) -> dict[str, Any]:
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
        fig, axes = mpf.plot(_mpf_frame(window.bars), **_mpf_kwargs(window), returnfig=True)
        try:
            legend, formatter = _decorate(fig, axes, window.kind, window.has_volume, len(window.bars))
            _show_drawn_smas(legend_entries(legend), window.kind, window.sma20, window.sma50)
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


def _no_tick_label_boxes(ticks: Any, renderer: Any) -> tuple[list, list]:
    return [], []


def _synthetic_window(kind: str, n: int, has_volume: bool) -> ChartWindow:
    """Bars alternating up/down (by open/close and by close/previous close)."""
    idx = np.arange(n, dtype="float64")
    up = idx % 2 == 0
    closes = 100.0 + idx + np.where(up, 0.5, -0.5)
    opens = np.where(up, closes - 0.4, closes + 0.4)
    dates = pd.bdate_range("2001-01-01", periods=n)
    bars = pd.DataFrame(
        {
            "date": dates,
            "open": opens if kind == "candle" else np.nan,
            "high": np.maximum(opens, closes) + 0.3 if kind == "candle" else np.nan,
            "low": np.minimum(opens, closes) - 0.3 if kind == "candle" else np.nan,
            "close": closes,
            "volume": 1e7 + idx * 1e5 if has_volume else np.nan,
        }
    )
    return ChartWindow("TEMPLATE", dates[-1], bars, closes - 1.0, closes - 2.0, "template", kind)


@contextmanager
def _rc_params(wanted: dict[str, Any]) -> Iterator[None]:
    """Draw under the template's rcParams: set (unvalidated: they came from rcParams)
    only the keys that differ now, and put them back afterwards."""
    params = matplotlib.rcParams
    current = {key: dict.__getitem__(params, key) for key in wanted}
    changed = {key: value for key, value in current.items() if value != wanted[key]}
    for key in changed:
        dict.__setitem__(params, key, wanted[key])
    try:
        yield
    finally:
        for key, value in changed.items():
            dict.__setitem__(params, key, value)


class ChartTemplate:
    """One mplfinance figure for a layout, redrawn per chart by updating its artists."""

    def __init__(self, kind: str, n: int, has_volume: bool) -> None:
        import mplfinance as mpf

        self.layout = (kind, n, has_volume)
        synthetic = _synthetic_window(kind, n, has_volume)
        with matplotlib.rc_context():
            fig, axes = mpf.plot(_mpf_frame(synthetic.bars), **_mpf_kwargs(synthetic), returnfig=True)
            self.rc = {
                key: dict.__getitem__(matplotlib.rcParams, key)
                for key in matplotlib.rcParams
                if key not in _PROCESS_WIDE_RC
            }
        import matplotlib.pyplot as plt

        plt.close(fig)
        _ChartCanvas(fig)  # own Agg canvas whatever pyplot's backend is
        self.fig = fig
        self.ax = axes[0]
        self.vax = axes[2] if has_volume else None
        for twin in axes[1::2]:  # empty secondary axes mplfinance makes per panel
            if not twin.lines and not twin.collections and not twin.patches:
                twin.set_visible(False)
        self.title = fig._suptitle
        # our layout, ticks and legend; the formatter looks up labels formatted once per
        # chart (mplfinance's converts dates per tick on every draw)
        legend, self.formatter = _decorate(fig, axes, kind, has_volume, n)
        self.ticks = tick_positions(n)
        for each in axes:
            if not each.get_xlabel():  # empty x label: skip re-placing it on every draw
                each.xaxis.set_label_coords(0.5, 0.0)
            for axis in (each.xaxis, each.yaxis):
                if hasattr(axis, "_get_ticklabel_bboxes"):
                    # every axis title is pinned and the x offset text is empty, so the
                    # tick-label extents matplotlib measures on each draw are never used
                    axis._get_ticklabel_bboxes = _no_tick_label_boxes
        lines = list(self.ax.lines)
        self.close_line = lines.pop(0) if kind == "line" else None
        self.sma_lines = lines  # sma20, sma50 (addplot order)
        if kind == "candle":
            self.wicks, self.bodies = self.ax.collections[:2]
            verts = self.bodies.get_paths()[0].vertices
            self.half_width = (verts[:, 0].max() - verts[:, 0].min()) / 2.0
            face, edge = self.bodies.get_facecolor(), self.bodies.get_edgecolor()
            wick = np.asarray(self.wicks.get_colors())
            self.face = (face[0], face[1 % len(face)])  # (up, down)
            self.edge = (edge[0], edge[1 % len(edge)])
            self.wick = (wick[0], wick[1 % len(wick)])
        if self.vax is not None:
            self._replace_volume_bars(n)
        if n == 1:  # one synthetic bar shows only the "up" colours: take both from two bars
            pair = ChartTemplate(kind, 2, has_volume)
            if kind == "candle":
                self.face, self.edge, self.wick = pair.face, pair.edge, pair.wick
            if self.vax is not None:
                self.vface, self.vedge = pair.vface, pair.vedge
        with _rc_params(self.rc):
            self.legend = _freeze_legend(fig, legend)

    def _replace_volume_bars(self, n: int) -> None:
        """Swap mplfinance's 60 Rectangle patches for one PolyCollection (same look,
        a fraction of the drawing and updating time)."""
        rects = list(self.vax.patches)
        # synthetic colours: bar 0 up (open < close), then close vs previous close
        # alternates down, up, ...
        self.vface = (np.array(rects[0].get_facecolor()), np.array(rects[1 % n].get_facecolor()))
        self.vedge = (np.array(rects[0].get_edgecolor()), np.array(rects[1 % n].get_edgecolor()))
        if n > 2 and tuple(rects[2].get_facecolor()) != tuple(self.vface[0]):
            raise RuntimeError("unexpected mplfinance volume colouring; update chart_render")
        first = rects[0]
        self.vhalf = first.get_width() / 2.0
        self.vbars = PolyCollection(
            [r.get_verts() for r in rects],
            facecolors=[r.get_facecolor() for r in rects],
            edgecolors=[r.get_edgecolor() for r in rects],
            linewidths=first.get_linewidth(),
            zorder=first.get_zorder(),
            transform=self.vax.transData,
        )
        for rect in rects:
            rect.remove()
        self.vax.add_collection(self.vbars, autolim=False)

    def render(self, window: ChartWindow) -> np.ndarray:
        """Draw ``window`` and return the RGBA buffer (a copy)."""
        with self._drawn(window) as rgba:
            return rgba.copy()

    def render_png(self, window: ChartWindow) -> bytes:
        """Draw ``window`` and encode it as PNG."""
        with self._drawn(window) as rgba:
            return encode_png(rgba)

    @contextmanager
    def _drawn(self, window: ChartWindow) -> Iterator[np.ndarray]:
        if window.layout != self.layout:
            raise ValueError(f"template {self.layout} cannot draw layout {window.layout}")
        with _rc_params(self.rc):
            self._update(window)
            self.fig.canvas.draw()
            yield np.asarray(self.fig.canvas.buffer_rgba())

    def _update(self, window: ChartWindow) -> None:
        bars = window.bars
        n = len(bars)
        xs = np.arange(n, dtype="float64")
        opens = bars["open"].to_numpy("float64")
        highs = bars["high"].to_numpy("float64")
        lows = bars["low"].to_numpy("float64")
        closes = bars["close"].to_numpy("float64")
        ax = self.ax
        if self.layout[0] == "candle":
            up = opens < closes
            lo_body, hi_body = np.minimum(opens, closes), np.maximum(opens, closes)
            left, right = xs - self.half_width, xs + self.half_width
            verts = np.stack(
                [
                    np.column_stack(p)
                    for p in ((left, opens), (left, closes), (right, closes), (right, opens))
                ],
                axis=1,
            )
            self.bodies.set_verts(verts)
            self.bodies.set_facecolor(np.where(up[:, None], self.face[0], self.face[1]))
            self.bodies.set_edgecolor(np.where(up[:, None], self.edge[0], self.edge[1]))
            seg_low = np.stack([np.column_stack((xs, lows)), np.column_stack((xs, lo_body))], 1)
            seg_high = np.stack([np.column_stack((xs, highs)), np.column_stack((xs, hi_body))], 1)
            self.wicks.set_segments(np.concatenate([seg_low, seg_high]))
            self.wicks.set_color(np.where(up[:, None], self.wick[0], self.wick[1]))
            miny, maxy = np.nanmin(lows), np.nanmax(highs)
        else:
            self.close_line.set_data(xs, closes)
            miny, maxy = np.nanmin(closes), np.nanmax(closes)
        points = []
        for line, values in zip(self.sma_lines, (window.sma20, window.sma50), strict=False):
            line.set_data(xs, values)
            finite = np.isfinite(values)
            points.append(np.column_stack((xs[finite], values[finite])))
        avg = (xs[-1] - xs[0]) / float(n)
        minx, maxx = xs[0] - avg, xs[-1] + avg
        if n == 1:
            minx, maxx = minx - 0.75, maxx + 0.75
        # mplfinance's data limits: the candles/line span (lows..highs), the SMA lines
        # and its corner points; then matplotlib's usual margins
        ax.ignore_existing_data_limits = True
        ax.update_datalim(np.concatenate([[(minx, miny), (maxx, maxy)], *points]))
        ax.autoscale_view()
        self.formatter.labels = tick_labels(pd.DatetimeIndex(bars["date"]), self.ticks)
        _show_drawn_smas(self.legend, self.layout[0], window.sma20, window.sma50)
        self.title.set_text(window.title)
        if self.vax is not None:
            self._update_volume(opens, closes, bars["volume"].to_numpy("float64"))

    def _update_volume(self, opens: np.ndarray, closes: np.ndarray, volumes: np.ndarray) -> None:
        up = np.empty(len(closes), dtype=bool)
        up[0] = opens[0] < closes[0] if not np.isnan(opens[0]) else False
        up[1:] = closes[:-1] < closes[1:]
        xs = np.arange(len(volumes), dtype="float64")
        left, right = xs - self.vhalf, xs + self.vhalf
        zero = np.zeros_like(volumes)
        self.vbars.set_verts(
            np.stack(
                [
                    np.column_stack(p)
                    for p in ((left, zero), (left, volumes), (right, volumes), (right, zero))
                ],
                axis=1,
            )
        )
        self.vbars.set_facecolor(np.where(up[:, None], self.vface[0], self.vface[1]))
        self.vbars.set_edgecolor(np.where(up[:, None], self.vedge[0], self.vedge[1]))
        vymin, vymax = 0.3 * np.nanmin(volumes), 1.1 * np.nanmax(volumes)
        vax = self.vax
        vax.set_ylim(vymin, vymax)
        offset = ""
        limits = self.rc["axes.formatter.limits"]
        if limits[0] < limits[1]:
            for power in (5, 4, 3, 2, 1):
                xp = limits[1] * power
                if vymax >= 10.0**xp:
                    vax.ticklabel_format(useOffset=False, scilimits=(xp, xp), axis="y")
                    offset = "  $10^{" + str(xp) + "}$"
                    break
        if not offset:
            vax.ticklabel_format(
                useOffset=self.rc["axes.formatter.useoffset"], scilimits=tuple(limits), axis="y"
            )
        vax.set_ylabel("Volume" + offset)


class TemplateCache:
    """A few templates kept per process (one per layout), least recently used dropped."""

    def __init__(self, size: int = 6) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int, bool], ChartTemplate] = OrderedDict()

    def get(self, layout: tuple[str, int, bool]) -> ChartTemplate:
        template = self._items.pop(layout, None)
        if template is None:
            template = ChartTemplate(*layout)
        self._items[layout] = template
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return template
