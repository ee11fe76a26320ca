"""An Agg canvas for charts drawn again and again: its renderer rasterizes each distinct
text (prices, dates, axis titles) once and reuses the glyph bitmaps wherever it reappears."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg


class CachedTextRenderer(RendererAgg):
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


class ChartCanvas(FigureCanvasAgg):
    """Agg canvas whose renderer caches rasterized text."""

    def get_renderer(self) -> RendererAgg:
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = CachedTextRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer
