"""The web page's chart endpoint with charts on demand: a day without a stored chart is drawn
from the stored bars, written to the charts folder and served from there next time; with eager
charts a missing one is a 404 that says to materialize them."""

from __future__ import annotations

import io
from datetime import date

from fastapi.testclient import TestClient
from PIL import Image
from web_testing import KEY, TinyHome

from stocker_core.market.chart_cli import bars_for_chart
from stocker_core.market.charts import render_chart
from stocker_core.web import charts as web_charts
from stocker_core.web.app import create_web_app


def _client(tiny: TinyHome, mode: str) -> TestClient:
    return TestClient(create_web_app(tiny.settings.model_copy(update={"charts": mode}), api_key=""))


def test_a_missing_chart_is_drawn_stored_and_then_served_from_its_file(tiny, monkeypatch):
    client = _client(tiny, "on_demand")
    day = tiny.days[5]
    stored = tiny.settings.charts_dir / "SYN" / f"{day}.png"
    assert not stored.exists()
    first = client.get(f"/web/api/charts/SYN/{day}")
    assert first.status_code == 200 and first.headers["content-type"] == "image/png"
    assert stored.read_bytes() == first.content  # kept in the charts folder
    expected = render_chart(bars_for_chart(tiny.settings, "SYN", date.fromisoformat(day)), "SYN", day)
    assert first.content == expected  # the chart the charts asset would draw
    assert Image.open(io.BytesIO(first.content)).size == (768, 768)

    def no_drawing(*args, **kwargs):
        raise AssertionError("a stored chart must not be drawn again")

    monkeypatch.setattr(web_charts, "draw_and_store", no_drawing)
    again = client.get(f"/web/api/charts/SYN/{day}")
    assert again.status_code == 200 and again.content == first.content
    council = client.get("/web/api/council/day", params={"episode": KEY, "date": day}).json()
    assert council["chart"] == f"api/charts/SYN/{day}" and council["chart_hint"] is None


def test_a_day_without_a_bar_is_a_404_that_says_why(tiny):
    client = _client(tiny, "on_demand")
    saturday = client.get("/web/api/charts/SYN/2015-03-07")
    assert saturday.status_code == 404 and "no chart of SYN on 2015-03-07" in saturday.json()["error"]
    assert not (tiny.settings.charts_dir / "SYN" / "2015-03-07.png").exists()
    unknown = client.get("/web/api/charts/NOPE/2015-03-06")
    assert unknown.status_code == 404 and "NOPE" in unknown.json()["error"]


def test_eager_charts_are_never_drawn_by_the_page(tiny):
    client = _client(tiny, "eager")
    day = tiny.days[7]
    missing = client.get(f"/web/api/charts/SYN/{day}")
    assert missing.status_code == 404 and "materialize the charts partition" in missing.json()["error"]
    assert not (tiny.settings.charts_dir / "SYN" / f"{day}.png").exists()
    council = client.get("/web/api/council/day", params={"episode": KEY, "date": day}).json()
    assert council["chart"] is None and "materialize charts" in council["chart_hint"]
    episode = client.get("/web/api/council/episode", params={"episode": KEY}).json()
    assert episode["chart_days"] == [tiny.days[0]]  # only the stored one
    stored = client.get(f"/web/api/charts/SYN/{tiny.days[0]}")
    assert stored.status_code == 200 and stored.content.startswith(b"\x89PNG")
