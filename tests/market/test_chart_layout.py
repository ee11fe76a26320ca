"""The chart's look: narrow margins, a legend, date ticks that end on the decision day
(bold, with its year), no repeated dates on a first-day chart, the year on line charts."""

from __future__ import annotations

import io
from datetime import date

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from stocker_core.market.chart_render import reference_png, tick_labels, tick_positions
from stocker_core.market.chart_template import ChartTemplate
from stocker_core.market.charts import chart_window, render_chart
from stocker_core.market.sample_source import SampleSource


@pytest.fixture(scope="module")
def googl() -> pd.DataFrame:
    return SampleSource().fetch("GOOGL", date(2009, 1, 1), date(2016, 4, 1))


@pytest.fixture(scope="module")
def aapl() -> pd.DataFrame:  # close-only in the sample
    return SampleSource().fetch("AAPL", date(2015, 1, 1), date(2016, 7, 1))


def _blank_margins(png: bytes) -> tuple[int, int]:
    """(blank columns on the left, blank rows at the bottom) of a chart image."""
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    inked = pixels < 250
    columns = np.flatnonzero(inked.any(axis=0))
    rows = np.flatnonzero(inked.any(axis=1))
    return int(columns[0]), int(pixels.shape[0] - 1 - rows[-1])


def _drawn(window) -> ChartTemplate:
    template = ChartTemplate(*window.layout)
    template.render(window)
    return template


def _tick_texts(template: ChartTemplate) -> list[tuple[str, str]]:
    axis = (template.vax or template.ax).xaxis
    ticks = axis.get_major_ticks(len(template.ticks))
    return [(t.label1.get_text(), t.label1.get_fontweight()) for t in ticks]


def test_tick_positions_end_on_the_decision_day():
    assert tick_positions(60) == [9, 19, 29, 39, 49, 59]  # every 10th bar back from the last
    assert tick_positions(13) == [0, 3, 6, 9, 12]  # ceil(13 / 6) = 3
    assert tick_positions(1) == [0]
    assert tick_positions(0) == []


def test_tick_labels_carry_the_year_where_it_matters():
    dates = pd.DatetimeIndex(["2015-12-30", "2015-12-31", "2016-01-04", "2016-01-05", "2016-01-06"])
    assert tick_labels(dates, [0, 2, 4]) == ["Dec 30\n2015", "", "Jan 04\n2016", "", "Jan 06\n2016"]
    same_year = pd.DatetimeIndex(["2016-03-01", "2016-03-02", "2016-03-03"])
    assert tick_labels(same_year, [0, 1, 2]) == ["Mar 01\n2016", "Mar 02", "Mar 03\n2016"]


def test_candle_chart_labels_the_decision_day_and_has_a_legend(googl):
    window = chart_window(googl, "GOOGL", "2016-03-15")
    template = _drawn(window)
    texts = _tick_texts(template)
    assert texts[-1] == ("Mar 15\n2016", "bold")
    assert all(weight == "normal" for _, weight in texts[:-1])
    assert [text.get_text() for _, text in template.legend] == ["SMA 20", "SMA 50"]
    assert all(text.get_visible() for _, text in template.legend)
    assert template.vax.xaxis.get_major_ticks()[0].label1.get_rotation() == 0


def test_margins_are_narrow(googl, aapl):
    for png in (render_chart(googl, "GOOGL", "2016-03-15"), render_chart(aapl, "AAPL", "2016-03-15")):
        left, bottom = _blank_margins(png)
        assert left <= 30 and bottom <= 30, (left, bottom)  # were ~140 and ~100 pixels
    assert Image.open(io.BytesIO(png)).size == (768, 768)


def test_first_day_chart_names_its_day_once(googl):
    window = chart_window(googl, "GOOGL", "2009-05-22")  # the sample's first GOOGL bar
    template = _drawn(window)
    assert _tick_texts(template) == [("May 22\n2009", "bold")]
    assert not any(text.get_visible() for _, text in template.legend)  # no SMA yet
    # one bar down (open 198.5 > close 197.0): drawn in the down colour, as mplfinance does
    ours = np.asarray(Image.open(io.BytesIO(render_chart(googl, "GOOGL", "2009-05-22"))).convert("RGB"))
    reference = np.asarray(Image.open(io.BytesIO(reference_png(window))).convert("RGB"))
    assert np.abs(ours.astype(int) - reference.astype(int)).mean() < 1.0


def test_close_only_line_chart_shows_the_year(aapl):
    window = chart_window(aapl, "AAPL", "2016-06-15")  # 60 sessions, all in 2016
    template = _drawn(window)
    texts = [text for text, _ in _tick_texts(template)]
    assert texts[0].endswith("\n2016") and texts[-1] == "Jun 15\n2016"
    assert [text.get_text() for _, text in template.legend] == ["Close", "SMA 20", "SMA 50"]


def test_the_look_is_deterministic_and_matches_the_reference(googl):
    first = render_chart(googl, "GOOGL", "2016-03-15")
    again = render_chart(googl, "GOOGL", "2016-03-15")
    assert first == again
    window = chart_window(googl, "GOOGL", "2016-03-15")
    ours = np.asarray(Image.open(io.BytesIO(first)).convert("RGB")).astype(int)
    reference = np.asarray(Image.open(io.BytesIO(reference_png(window))).convert("RGB")).astype(int)
    assert np.abs(ours - reference).mean() < 1.0


@pytest.mark.parametrize("scale", [1e-4, 1.0, 600.0])  # prices ~0.07, ~700, ~420,000
def test_axis_titles_clear_the_widest_price_labels(googl, scale):
    bars = googl.copy()
    bars[["open", "high", "low", "close", "adj_close"]] *= scale
    window = chart_window(bars, "GOOGL", "2016-03-15")
    template = _drawn(window)
    renderer = template.fig.canvas.get_renderer()
    for axes in (template.ax, template.vax):
        title = axes.yaxis.label.get_window_extent(renderer)
        labels = [t.get_window_extent(renderer) for t in axes.get_yticklabels() if t.get_text()]
        assert labels and all(label.x1 < title.x0 for label in labels), axes.yaxis.label.get_text()
        assert title.x1 <= 768
