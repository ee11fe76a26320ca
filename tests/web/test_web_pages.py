"""Every page answers 200, loads only files shipped with the package, and links stay relative."""

from html.parser import HTMLParser
from pathlib import Path

import pytest

from stocker_core.web.pages import PAGES

STATIC = Path(__file__).resolve().parents[2] / "stocker_core" / "web" / "static"


class Resources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "action", "data", "poster", "srcset") and value:
                self.urls.append(value)
            if name == "id":
                self.ids.add(value)


def _is_local(url: str) -> bool:
    return not url.startswith(("//", "http:", "https:", "ftp:")) and "://" not in url


@pytest.mark.parametrize("path", sorted(PAGES))
def test_every_page_answers_and_loads_nothing_from_outside(client, path):
    response = client.get(f"/web/{path}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    parser = Resources()
    parser.feed(response.text)
    assert parser.urls and all(_is_local(u) for u in parser.urls), parser.urls
    assert "main" in parser.ids and "notice" in parser.ids
    for url in parser.urls:
        if url.startswith("static/"):
            assert client.get(f"/web/{url}").status_code == 200, url
    scripts = [u for u in parser.urls if u.endswith(".js")]
    assert scripts == ["static/common.js", "static/charts.js", f"static/{PAGES[path]}.js"]


def test_static_files_name_no_external_host():
    """Scripts and styles never fetch from elsewhere (the SVG namespace is a name, not a request)."""
    for file in STATIC.iterdir():
        text = file.read_text().replace("http://www.w3.org/2000/svg", "")
        assert "http://" not in text and "https://" not in text and "@import" not in text, file.name
        assert "fonts.googleapis" not in text and "cdn" not in text.lower(), file.name


def test_web_without_slash_redirects_and_root_points_to_web(client):
    assert client.get("/web", follow_redirects=False).headers["location"] == "/web/"
    assert client.get("/", follow_redirects=False).headers["location"] == "/web/"


def test_environment_server_routes_stay_beside_the_page(client):
    """``create_web_app`` is the OpenEnv server plus the page: /reset still plays."""
    assert client.get("/health").json()["status"] == "healthy"
    assert client.post("/reset", json={"episode": "SYN|2015-03-01"}).status_code == 200
