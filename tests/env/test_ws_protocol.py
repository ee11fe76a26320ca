"""The OpenEnv WebSocket protocol at /ws, against a live uvicorn server on 127.0.0.1:
openenv-core's own GenericEnvClient, the typed StockerOpenEnv, 16 concurrent clients, and
the refusals (API key, oversized and malformed messages, the session cap, idle connections)."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import httpx
import pytest
from server_testing import live_server
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ObservationModel, StateModel
from stocker_core.env.client import StockerEnvClient
from stocker_core.env.server import create_app

openenv_core = pytest.importorskip(
    "openenv.core", reason="pip install --no-deps openenv-core==0.3.0 and fastmcp (the dev extra)"
)
GenericEnvClient = openenv_core.GenericEnvClient


def _ws(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def _script(step: int) -> dict:
    """A fixed action script: buy 3 on even steps from 2, sell 2 every fifth, else hold."""
    if step % 5 == 4:
        return {"side": "sell", "quantity": 2}
    if step % 2 == 0 and step > 0:
        return {"side": "buy", "quantity": 3}
    return {"side": "hold", "quantity": 0}


def _play_generic(url: str, task: str = "task_easy") -> tuple[list[float], dict]:
    with GenericEnvClient(base_url=url).sync() as env:
        result = env.reset(task_id=task)
        assert result.reward is None and result.done is False
        rewards = []
        while not result.done:
            result = env.step(_script(result.observation["step"]))
            rewards.append(result.reward)
        return rewards, env.state()


def test_generic_client_plays_an_episode_with_the_http_routes_rewards(seed_settings):
    with live_server(create_app(seed_settings, api_key="")) as url:
        ws_rewards, state = _play_generic(url)
        with StockerEnvClient(url) as http:
            result = http.reset("task_easy")
            http_rewards = []
            while not result.done:
                result = http.step(_script(result.observation.step))
                http_rewards.append(result.reward)
        # the connection's session ended with it
        assert httpx.get(f"{url}/health", timeout=60).json()["sessions"] == 0
    assert len(ws_rewards) == state["observation"]["total_steps"] == 43
    assert ws_rewards == pytest.approx(http_rewards, abs=0)
    assert state["total_reward"] == pytest.approx(sum(ws_rewards))
    assert state["done"] is True and state["episode_key"].startswith("AAPL|")


def test_typed_client_parses_models_and_sends_the_api_key(seed_settings):
    from stocker_core.env.openenv_client import StockerOpenEnv, StockerStepResult

    with live_server(create_app(seed_settings, api_key="s3cret")) as url:
        with StockerOpenEnv(base_url=url, api_key="s3cret").sync() as env:
            first = env.reset(task_id="task_easy")
            assert isinstance(first, StockerStepResult) and isinstance(first.observation, ObservationModel)
            assert first.info["episode"]["ticker"] == "AAPL" and first.session_id
            result = env.step(Action.buy(5))
            assert result.observation.position == 5 and result.reward is not None
            assert result.info["breakdown"]["invalid_penalty"] == 0.0
            state = env.state()
            assert isinstance(state, StateModel) and state.rewards == [result.reward]
            with pytest.raises(RuntimeError, match="invalid action: side"):
                env.step({"side": "short", "quantity": 1})
            assert env.step(Action.hold()).observation.step == 2  # still serving
        # no key / a wrong key: refused at the handshake with the HTTP route's 401 and message
        wrong_key = StockerOpenEnv(base_url=url, api_key="wrong").sync()
        with pytest.raises(ConnectionError, match="HTTP 401.*missing or wrong API key"), wrong_key as env:
            env.reset()
        with pytest.raises(ConnectionError, match="401"), GenericEnvClient(base_url=url).sync() as env:
            env.reset()
        with pytest.raises(InvalidStatus) as refused:
            connect(_ws(url)).close()
        assert refused.value.response.status_code == 401
        assert "Authorization: Bearer" in json.loads(refused.value.response.body)["error"]


def _ask(ws, message) -> dict:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=120))


def test_bad_messages_get_clear_errors_and_the_connection_keeps_serving(seed_settings):
    with live_server(create_app(seed_settings, api_key="")) as url, connect(_ws(url)) as ws:
        early = _ask(ws, {"type": "step", "data": {"side": "hold", "quantity": 0}})
        assert early["type"] == "error" and "reset" in early["data"]["message"]
        assert _ask(ws, "{not json")["data"]["code"] == "INVALID_JSON"
        assert _ask(ws, "[1, 2]")["data"]["code"] == "VALIDATION_ERROR"
        nan = _ask(ws, '{"type": "step", "data": {"side": "buy", "quantity": NaN}}')
        assert nan["data"]["code"] == "INVALID_JSON" and "NaN is not a number" in nan["data"]["message"]
        unknown = _ask(ws, {"type": "jump"})
        assert (
            unknown["data"]["code"] == "UNKNOWN_TYPE"
            and "reset, step, state or close" in unknown["data"]["message"]
        )
        big = _ask(ws, json.dumps({"type": "step", "data": {"pad": "x" * 1_200_000}}))
        assert big["data"] == {
            "message": "message over the 1,000,000-byte limit: ignored",
            "code": "MESSAGE_TOO_LARGE",
            "status": 413,
        }
        bad_reset = _ask(ws, {"type": "reset", "data": {"task_id": "task_easy", "session_id": "mine"}})
        assert (
            bad_reset["data"]["code"] == "VALIDATION_ERROR" and "session_id" in bad_reset["data"]["message"]
        )
        missing = _ask(ws, {"type": "reset", "data": {"task_id": "task_nope"}})
        assert missing["data"]["status"] == 404
        # OpenEnv's generic seed is accepted and ignored
        reset = _ask(ws, {"type": "reset", "data": {"task_id": "task_easy", "seed": 7}})
        assert reset["type"] == "observation" and reset["data"]["observation"]["step"] == 0
        step = _ask(ws, {"type": "step", "data": {"side": "buy", "quantity": 1}})
        assert step["type"] == "observation" and step["data"]["observation"]["position"] == 1
        assert _ask(ws, {"type": "state"})["data"]["rewards"] == [step["data"]["reward"]]
        ws.send(json.dumps({"type": "close"}))
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)


def test_session_cap_refuses_clearly_and_frees_on_close(seed_settings):
    app = create_app(seed_settings, api_key="", max_sessions=2)
    with live_server(app) as url, contextlib.ExitStack() as stack:
        first, second = (stack.enter_context(connect(_ws(url))) for _ in range(2))
        for ws in (first, second):
            assert _ask(ws, {"type": "reset", "data": {"task_id": "task_easy"}})["type"] == "observation"
        # a third connection: refused with the reason, closed with 1013 (try again later)
        third = stack.enter_context(connect(_ws(url)))
        refusal = json.loads(third.recv(timeout=10))
        assert (
            refusal["data"]["code"] == "CAPACITY_REACHED"
            and "maximum of 2 sessions" in refusal["data"]["message"]
        )
        with pytest.raises(ConnectionClosed) as closed:
            third.recv(timeout=10)
        assert closed.value.rcvd.code == 1013
        # the HTTP route shares the cap
        assert httpx.post(f"{url}/reset", json={"task_id": "task_easy"}, timeout=60).status_code == 429
        # the others still play; closing one frees its slot
        assert _ask(first, {"type": "step", "data": {"side": "hold", "quantity": 0}})["type"] == "observation"
        second.close()
        deadline = time.monotonic() + 10
        while app.state.ws.open > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        with connect(_ws(url)) as again:
            assert _ask(again, {"type": "reset", "data": {"task_id": "task_easy"}})["type"] == "observation"
        first.close()
        assert app.state.ws.refused == 1


def test_one_client_past_its_quota_is_refused_and_others_are_not(seed_settings):
    app = create_app(seed_settings, api_key="", max_per_client=1)
    with live_server(app) as url, connect(_ws(url)) as first:
        assert _ask(first, {"type": "reset", "data": {"task_id": "task_easy"}})["type"] == "observation"
        with connect(_ws(url)) as second:
            refusal = json.loads(second.recv(timeout=10))
            assert refusal["data"]["code"] == "CAPACITY_REACHED"
            assert "this client holds its maximum of 1 sessions" in refusal["data"]["message"]
        assert _ask(first, {"type": "step", "data": {"side": "hold", "quantity": 0}})["type"] == "observation"
        assert app.state.ws.per_client == {"127.0.0.1": 1}


def test_a_reset_past_the_session_cap_is_refused_and_the_connection_stays(seed_settings):
    app = create_app(seed_settings, api_key="", max_sessions=1)
    with live_server(app) as url:
        held = httpx.post(f"{url}/reset", json={"task_id": "task_easy"}, timeout=60).json()["session_id"]
        with connect(_ws(url)) as ws:
            refused = _ask(ws, {"type": "reset", "data": {"task_id": "task_easy"}})
            assert refused["data"]["code"] == "CAPACITY_REACHED" and refused["data"]["status"] == 429
            httpx.request("DELETE", f"{url}/session", headers={"X-Session-Id": held}, timeout=60)
            assert _ask(ws, {"type": "reset", "data": {"task_id": "task_easy"}})["type"] == "observation"


def test_an_idle_connection_is_told_and_closed(seed_settings):
    with live_server(create_app(seed_settings, api_key="", idle_s=0.5)) as url, connect(_ws(url)) as ws:
        assert _ask(ws, {"type": "reset", "data": {"task_id": "task_easy"}})["type"] == "observation"
        notice = json.loads(ws.recv(timeout=10))
        assert notice["data"]["code"] == "SESSION_ERROR" and "idle for 0.5 s" in notice["data"]["message"]
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        assert httpx.get(f"{url}/health", timeout=60).json()["sessions"] == 0


def test_sixteen_concurrent_generic_clients_play_without_errors(seed_settings):
    app = create_app(seed_settings, api_key="", preload=["task_easy"])
    errors: list[BaseException] = []
    results: list[tuple[list[float], dict]] = []
    peak = {"sessions": 0}
    barrier = threading.Barrier(16)

    def rollout() -> None:
        try:
            with GenericEnvClient(base_url=url).sync() as env:
                result = env.reset(task_id="task_easy")
                barrier.wait(timeout=60)  # all 16 sessions live at once
                peak["sessions"] = max(peak["sessions"], len(app.state.service.sessions))
                rewards = []
                while not result.done:
                    result = env.step(_script(result.observation["step"]))
                    rewards.append(result.reward)
                results.append((rewards, env.state()))
        except BaseException as exc:  # noqa: BLE001 - every failure is collected and asserted
            errors.append(exc)

    with live_server(app) as url:
        threads = [threading.Thread(target=rollout) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert errors == []
    assert len(results) == 16 and peak["sessions"] == 16
    ids = {state["session_id"] for _, state in results}
    assert len(ids) == 16
    first = results[0][0]
    assert all(rewards == first for rewards, _ in results)  # same script, same rewards


@pytest.mark.slow
def test_openenv_validate_cli_passes_against_a_live_server(seed_settings):
    """`openenv validate --url` (openenv-core's own command) on a server that also serves /ws."""
    import subprocess
    import sys
    from pathlib import Path

    command = Path(sys.executable).with_name("openenv")
    if not command.exists():
        pytest.skip("the openenv command is not installed")
    with live_server(create_app(seed_settings, api_key="")) as url:
        run = subprocess.run(
            [str(command), "validate", "--url", url, "--json"], capture_output=True, text=True, timeout=120
        )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["passed"] and report["summary"]["passed_count"] == report["summary"]["total_count"] == 6
