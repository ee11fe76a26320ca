"""The web page's chart endpoint with charts on demand: a day without a stored chart is drawn
from the stored bars and kept in the server's memory (never written into the home: issue 52),
served from there next time; with eager charts a missing one is a 404 that says to materialize
them. Only the home's tickers are drawn: the universe, the benchmark, the reference tasks' and
those with stored bars."""

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
from stocker_core.web.chart_memory import ChartMemory


def _client(tiny: TinyHome, mode: str) -> TestClient:
    return TestClient(create_web_app(tiny.settings.model_copy(update={"charts": mode}), api_key=""))


def test_a_missing_chart_is_drawn_kept_in_memory_and_then_served_from_there(tiny, monkeypatch):
    client = _client(tiny, "on_demand")
    day = tiny.days[5]
    stored = tiny.settings.charts_dir / "SYN" / f"{day}.png"
    assert not stored.exists()
    first = client.get(f"/web/api/charts/SYN/{day}")
    assert first.status_code == 200 and first.headers["content-type"] == "image/png"
    assert not stored.exists()  # the page writes nothing into the home
    assert len(client.app.page.state.web.charts) == 1
    expected = render_chart(bars_for_chart(tiny.settings, "SYN", date.fromisoformat(day)), "SYN", day)
    assert first.content == expected  # the chart the charts asset would draw
    assert Image.open(io.BytesIO(first.content)).size == (768, 768)

    def no_drawing(*args, **kwargs):
        raise AssertionError("a stored chart must not be drawn again")

    monkeypatch.setattr(web_charts, "draw", no_drawing)
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


def test_only_the_homes_tickers_are_drawn(tiny, monkeypatch):
    """Not any symbol the source knows: AAPL is a reference task's, ^GSPC the benchmark, SYN has
    stored bars; MSFT (the sample source has it) is none of these and is not drawn."""
    drawn = []
    monkeypatch.setattr(web_charts, "draw", lambda settings, ticker, day: drawn.append(ticker) or b"png")
    client = _client(tiny, "on_demand")
    for ticker in ("SYN", "AAPL", "^GSPC", "GOOGL"):
        assert client.get(f"/web/api/charts/{ticker}/2015-03-06").status_code == 200, ticker
    refused = client.get("/web/api/charts/MSFT/2015-03-06")
    assert refused.status_code == 404 and "the page draws the universe's tickers" in refused.json()["error"]
    assert drawn == ["SYN", "AAPL", "^GSPC", "GOOGL"]


def test_the_memory_is_bounded():
    memory = ChartMemory(limit=250)
    for i in range(10):
        memory.put("SYN", date(2015, 3, 2 + i), bytes(100))
    assert len(memory) == 2 and memory.size == 200
    assert memory.get("SYN", date(2015, 3, 11)) is not None and memory.get("SYN", date(2015, 3, 2)) is None
    memory.put("SYN", date(2015, 3, 2), bytes(300))  # larger than the whole limit: not kept
    assert memory.get("SYN", date(2015, 3, 2)) is None and memory.size == 200


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
