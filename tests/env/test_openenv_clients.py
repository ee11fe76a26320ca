"""OpenEnv 0.10's own clients and runtime graders against a started ``stocker serve``:
``GenericEnvClient`` (the reward's terms in ``metadata``, the state contract),
``MCPToolClient`` (sessions by ``openenv/session/create``, Stocker's own tools, the WebSocket
attached to the same session). The runtime graders run in ``test_openenv_live.py``."""

from __future__ import annotations

import httpx
import pytest
from server_testing import live_server

from stocker_core.agent.tool_catalog import TOOL_NAMES
from stocker_core.env.server import create_app

openenv_core = pytest.importorskip(
    "openenv.core", reason="pip install --no-deps openenv==0.10.0 (the dev extra)"
)


def test_generic_client_gets_metadata_and_the_state_contract(seed_settings):
    with (
        live_server(create_app(seed_settings, api_key="")) as url,
        openenv_core.GenericEnvClient(base_url=url).sync() as env,
    ):
        first = env.reset(task_id="task_easy", episode_id="run-7/episode-1", seed=3)
        assert first.metadata["episode_id"] == "run-7/episode-1"
        assert first.metadata["episode"]["ticker"] == "AAPL"
        for _ in range(3):
            result = env.step({"side": "buy", "quantity": 2})
        assert result.metadata["breakdown"]["invalid_penalty"] == 0.0
        assert result.metadata["breakdown"]["reward"] == pytest.approx(result.reward)
        state = env.state()
        assert state["episode_id"] == "run-7/episode-1" and state["step_count"] == 3
        again = env.reset(task_id="task_easy")  # no episode_id: a new one
        assert again.metadata["episode_id"] not in ("", "run-7/episode-1")
        assert env.state()["step_count"] == 0


def test_mcp_tool_client_plays_with_stockers_own_tools(seed_settings):
    from openenv.core.mcp_client import MCPToolClient

    with live_server(create_app(seed_settings, api_key="")) as url:
        with MCPToolClient(base_url=url).sync() as env:
            names = [tool.name for tool in env.list_tools()]
            assert names[:3] == ["start_episode", "place_order", "get_quote"]
            assert set(names[3:]) == set(TOOL_NAMES)
            started = env.call_tool("start_episode", task_id="task_hard", episode_id="mcp-1")
            assert started["observation"]["ticker"] == "META"
            order = env.call_tool("place_order", side="buy", quantity=3)
            assert order["observation"]["position"] == 3 and "breakdown" in order["metadata"]
            news = env.call_tool("get_news", days=7)
            assert "error" not in news
            quote = env.call_tool("get_quote")
            assert quote["step_count"] == 1 and quote["episode_id"] == "mcp-1"
            # the WebSocket is attached to the same session
            played = env.reset(task_id="task_medium")
            assert played.observation.model_dump()["ticker"] == "INTC"
            assert env.call_tool("get_quote")["observation"]["ticker"] == "INTC"
            assert httpx.get(f"{url}/health").json()["sessions"] == 1
        assert httpx.get(f"{url}/health").json()["sessions"] == 0  # closed with the client
