"""The servers only read the home (SECURITY.md; issue 52): every GET route of ``stocker web``
(the environment server and the page, found by walking their routes, so a new one must be
listed here) is called with good and bad values, charts on demand, and afterwards not a file
under the home is new, gone or changed. Before the fix the chart route drew a missing day's
chart into ``$STOCKER_HOME/charts/`` — for ``^GSPC`` too, not a ticker of the universe."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from web_testing import KEY, TinyHome

from stocker_core.web.app import create_web_app
from stocker_core.web.pages import PAGES


def tree(home: Path) -> dict[str, tuple[int, str]]:
    """Every file and folder under ``home``: size and content hash (folders: -1)."""
    out = {}
    for path in sorted(home.rglob("*")):
        name = str(path.relative_to(home))
        if path.is_dir():
            out[name] = (-1, "")
        else:
            out[name] = (path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def get_routes(app) -> set[str]:
    """The path of every GET route of ``stocker web``'s app (server and page)."""
    found = set()
    for part, prefix in ((app.server, ""), (app.page, "/web")):
        found |= {prefix + p for p, ops in part.openapi()["paths"].items() if "get" in ops}
        for route in part.routes:
            if "GET" in (getattr(route, "methods", None) or ()):
                found.add(prefix + route.path)
            elif hasattr(route, "routes") and getattr(route, "path", ""):
                found.add(prefix + route.path + "/{path}")
    return found


def urls(tiny: TinyHome, env_sid: str, play_sid: str) -> dict[str, list[str]]:
    """Concrete URLs per route, good and bad values."""
    day, later, weekend = tiny.days[0], tiny.days[5], "2015-03-07"
    tickers = ("SYN", "^GSPC", "^SYN", "AAPL", "NOPE")
    charts = [f"/web/api/charts/{t}/{d}" for t in tickers for d in (day, later)]
    return {
        "/": ["/"],
        "/docs": ["/docs"],
        "/docs/oauth2-redirect": ["/docs/oauth2-redirect"],
        "/redoc": ["/redoc"],
        "/openapi.json": ["/openapi.json"],
        "/health": ["/health"],
        "/metadata": ["/metadata"],
        "/schema": ["/schema"],
        "/state": [f"/state?session_id={env_sid}", "/state"],
        "/snapshot": [f"/snapshot?session_id={env_sid}"],
        "/list_environments": ["/list_environments"],
        "/{env_name}/splits": ["/stocker/splits", "/nope/splits"],
        "/web": ["/web"],
        **{f"/web/{p}" if p else "/web/": [f"/web/{p}"] for p in PAGES},
        "/web/static/{path}": ["/web/static/common.js", "/web/static/style.css", "/web/static/nope.js"],
        "/web/api/status": ["/web/api/status"],
        "/web/api/choices": ["/web/api/choices"],
        "/web/api/play/{session_id}": [f"/web/api/play/{play_sid}", "/web/api/play/" + "0" * 32],
        "/web/api/council/episode": [f"/web/api/council/episode?episode={KEY}", "/web/api/council/episode"],
        "/web/api/council/day": [
            f"/web/api/council/day?episode={KEY}&date={d}" for d in (day, later, weekend)
        ],
        "/web/api/charts/{ticker}/{date}": [*charts, f"/web/api/charts/SYN/{weekend}"],
        "/web/api/compare/episodes": ["/web/api/compare/episodes"],
        "/web/api/compare/episode": [f"/web/api/compare/episode?key={KEY}"],
        "/web/api/compare/rolling": ["/web/api/compare/rolling"],
        "/web/api/forward": ["/web/api/forward"],
        "/web/api/reports": ["/web/api/reports"],
        "/web/api/reports/{name}/report.html": ["/web/api/reports/evaluation/report.html"],
        "/web/api/training": ["/web/api/training"],
        "/web/api/training/{run_id}/image": [
            "/web/api/training/run1:moderator_sft/image",
            "/web/api/training/ppo-abc/image",
        ],
        "/web/api/corpus": ["/web/api/corpus"],
    }


@pytest.mark.parametrize("mode", ["on_demand", "eager"])
def test_no_get_route_writes_into_the_home(tiny, mode) -> None:
    settings = tiny.settings.model_copy(update={"charts": mode})
    app = create_web_app(settings, api_key="")
    client = TestClient(app)
    env_sid = client.post("/reset", json={"episode": KEY}).json()["session_id"]
    # (the environment server's first /reset may create the text tables: stocker_core/env's part)
    before = tree(settings.home)  # the page's plays below write nothing either
    play_sid = client.post("/web/api/play", json={"episode": KEY, "policy": "council"}).json()["state"]
    play_sid = play_sid["session_id"]
    planned = urls(tiny, env_sid, play_sid)
    routes = get_routes(app)
    assert routes - set(planned) == set(), "a GET route this test does not call"
    assert client.post(f"/web/api/play/{play_sid}/run").status_code == 200
    answers = {}
    for route in sorted(routes):
        for url in planned[route]:
            answer = client.get(url, follow_redirects=False)
            assert answer.status_code < 500, (url, answer.text)
            answers[url] = answer.status_code
    assert tree(settings.home) == before
    drawn = [f"/web/api/charts/{t}/{tiny.days[5]}" for t in ("SYN",)]
    if mode == "on_demand":  # drawn in memory and served all the same
        assert [answers[u] for u in drawn] == [200]
        assert client.get(drawn[0]).content.startswith(b"\x89PNG")
    assert answers[f"/web/api/charts/NOPE/{tiny.days[0]}"] == 404
