"""The environment server's cache of loaded episodes is an LRU of a documented size: loading
more distinct episodes than it holds keeps memory bounded, and a live session keeps playing
after its episode left the cache (issue 22, defect 4)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from stocker_core.env.server import create_app
from stocker_core.env.server_sessions import EpisodeCache

MONTHS = ["SYN|2015-02-01", "SYN|2015-03-01", "SYN|2015-04-01", "SYN|2015-05-01", "SYN|2015-06-01"]


def test_the_cache_keeps_the_most_recently_used_episodes_only(tiny):
    cache = EpisodeCache(tiny.settings, max_episodes=2)
    for key in MONTHS[:3]:
        cache.get(key)
    assert len(cache) == 2 and cache.loads == 3
    assert cache.cached(MONTHS[0]) is None  # the least recently used went first
    cache.get(MONTHS[1])  # a hit marks it recently used ...
    cache.get(MONTHS[3])  # ... so this load drops MONTHS[2], not MONTHS[1]
    assert cache.cached(MONTHS[1]) is not None and cache.cached(MONTHS[2]) is None
    assert cache.loads == 4 and len(cache._loading) == 0  # no gate left behind either


def test_many_distinct_episodes_leave_the_server_bounded_and_sessions_playing(tiny):
    app = create_app(tiny.settings, api_key="", max_episodes=2)
    client = TestClient(app)
    first = client.post("/reset", json={"episode": MONTHS[0]}).json()["session_id"]
    for key in MONTHS[1:3]:
        assert client.post("/reset", json={"episode": key}).status_code == 200
    service = app.state.service
    assert len(service.episodes) == 2 and service.episodes.loads == 3
    assert service.episodes.cached(MONTHS[0]) is None
    stepped = client.post("/step", json={"side": "hold", "quantity": 0}, headers={"X-Session-Id": first})
    assert stepped.status_code == 200 and stepped.json()["observation"]["step"] == 1
    assert client.get("/metadata").json()["max_cached_episodes"] == 2
