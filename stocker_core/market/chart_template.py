"""The fast way to draw chart windows: ``ChartTemplate``, an mplfinance figure built once per
layout (kind, number of bars, volume panel or not) whose artists are updated in place per
chart and drawn on an Agg canvas that caches text (``chart_canvas``); the RGBA buffer is
PNG-encoded with Pillow at a low compression level. Same look as ``chart_render.reference_png``
(same ``mplfinance.plot`` arguments and decoration), several times faster. ``TemplateCache``
keeps a few per process.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D

from stocker_core.market.chart_canvas import ChartCanvas
from stocker_core.market.chart_render import (
    ChartWindow,
    LegendEntry,
    decorate,
    encode_png,
    legend_entries,
    mpf_frame,
    mpf_kwargs,
    show_drawn_smas,
    tick_labels,
    tick_positions,
)

_PROCESS_WIDE_RC = {"backend", "backend_fallback", "interactive"}  # never switched per chart


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
            fig, axes = mpf.plot(mpf_frame(synthetic.bars), **mpf_kwargs(synthetic), returnfig=True)
            self.rc = {
                key: dict.__getitem__(matplotlib.rcParams, key)
                for key in matplotlib.rcParams
                if key not in _PROCESS_WIDE_RC
            }
        import matplotlib.pyplot as plt

        plt.close(fig)
        ChartCanvas(fig)  # own Agg canvas whatever pyplot's backend is
        self.fig = fig
        self.ax = axes[0]
        self.vax = axes[2] if has_volume else None
        for twin in axes[1::2]:  # empty secondary axes mplfinance makes per panel
            if not twin.lines and not twin.collections and not twin.patches:
                twin.set_visible(False)
        self.title = fig._suptitle
        # our layout, ticks and legend; the formatter looks up labels formatted once per
        # chart (mplfinance's converts dates per tick on every draw)
        legend, self.formatter = decorate(fig, axes, kind, has_volume, n)
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
            raise RuntimeError("unexpected mplfinance volume colouring; update chart_template")
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
        show_drawn_smas(self.legend, self.layout[0], window.sma20, window.sma50)
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
