"""``stocker serve`` is one server for both: the environment (OpenEnv routes) and the web page
at ``/web``, with one API key; ``--no-web`` serves the environment alone."""

from __future__ import annotations

import httpx
from browser_testing import live_server
from web_testing import KEY

TIMEOUT = 60  # a first /reset loads the episode, and the box may be busy


def test_serve_answers_the_environment_and_the_page(tiny):
    with live_server(tiny.settings) as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        page = http.get("/web/")
        assert page.status_code == 200 and "<title>Stocker" in page.text
        assert http.get("/web/static/common.js").status_code == 200
        assert http.get("/web/api/status").json()["exists"] is True
        assert http.get("/").headers["location"] == "/web/"
        assert http.get("/web").headers["location"] == "/web/"
        assert http.get("/web/api/no-such-route").status_code == 404  # the page's, not the server's
        reset = http.post("/reset", json={"episode": KEY})
        assert reset.status_code == 200
        assert reset.json()["observation"]["ticker"] == "SYN"


def test_serve_with_a_key_guards_both_but_not_the_page_itself(tiny):
    with live_server(tiny.settings, "s3cret") as url, httpx.Client(base_url=url, timeout=TIMEOUT) as http:
        bearer = {"Authorization": "Bearer s3cret"}
        assert http.get("/web/compare").status_code == 200
        assert http.get("/web/api/status").status_code == 401
        assert http.get("/web/api/status", headers=bearer).status_code == 200
        assert http.post("/reset", json={"episode": KEY}).status_code == 401
        assert http.post("/reset", json={"episode": KEY}, headers=bearer).status_code == 200


def test_serve_no_web_is_the_environment_alone(tiny):
    with (
        live_server(tiny.settings, "", "--no-web") as url,
        httpx.Client(base_url=url, timeout=TIMEOUT) as http,
    ):
        assert http.get("/web/").status_code == 404
        assert http.post("/reset", json={"episode": KEY}).status_code == 200
