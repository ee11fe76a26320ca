"""Steps per second over OpenEnv's WebSocket protocol (/ws) against the HTTP routes
(/reset, /step), measured in one run on one server, and the server's memory per session.

Starts the environment server (``create_app``, uvicorn, its own process) on a free loopback
port with the seed fixture as the ``files`` source and the three tasks preloaded, then:

1. one client, sequential: whole task_easy episodes (hold / buy 1 / sell 1) for
   ``--steps`` steps, over HTTP (httpx keep-alive, ``StockerEnvClient``) and over /ws
   (``websockets``, and openenv's ``GenericEnvClient`` when installed);
2. ``--clients`` concurrent asyncio clients, the same episodes, HTTP (httpx) against /ws;
3. the server's resident memory before and after ``--sessions`` open /ws sessions (each
   reset on a task): the difference per session.

    python bench/bench_ws.py                   # ~1 min on a 2-core box
    python bench/bench_ws.py --steps 2000 --clients 32 --sessions 256
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect as ws_connect
from websockets.sync.client import connect as ws_connect_sync

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import SEED_DIR, TASKS, free_port, wait_healthy  # noqa: E402

ACTIONS = ({"side": "hold", "quantity": 0}, {"side": "buy", "quantity": 1}, {"side": "sell", "quantity": 1})


def start_server(port: int, home: str, sessions: int) -> subprocess.Popen:
    """The environment server in its own process, every cap above ``sessions`` (one client
    address here: loopback), the three tasks preloaded."""
    import os

    env = {**os.environ, "STOCKER_SOURCE": "files", "STOCKER_FILES_DIR": str(SEED_DIR), "STOCKER_HOME": home}
    env.pop("STOCKER_API_KEY", None)
    code = (
        "import uvicorn\n"
        "from stocker_core.composition import register_all\n"
        "from stocker_core.env.server import create_app\n"
        "register_all()\n"  # as stocker serve does
        f"app = create_app(api_key='', max_sessions={sessions}, max_per_client={sessions},\n"
        f"                 preload={TASKS!r})\n"
        f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='warning')\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def http_sequential(url: str, steps: int) -> float:
    from stocker_core.env.client import StockerEnvClient

    done, start = 0, time.perf_counter()
    with StockerEnvClient(url) as env:
        result = env.reset("task_easy")
        while done < steps:
            result = env.step(ACTIONS[done % 3])
            done += 1
            if result.done:
                result = env.reset("task_easy")
    return done / (time.perf_counter() - start)


def ws_sequential(url: str, steps: int) -> float:
    done, start = 0, time.perf_counter()
    with ws_connect_sync(url.replace("http", "ws", 1) + "/ws", max_size=None) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": "task_easy"}}))
        json.loads(ws.recv())
        while done < steps:
            ws.send(json.dumps({"type": "step", "data": ACTIONS[done % 3]}))
            answer = json.loads(ws.recv())
            done += 1
            if answer["data"]["done"]:
                ws.send(json.dumps({"type": "reset", "data": {"task_id": "task_easy"}}))
                json.loads(ws.recv())
    return done / (time.perf_counter() - start)


def openenv_sequential(url: str, steps: int) -> float | None:
    try:
        from openenv.core import GenericEnvClient
    except ImportError:
        return None
    done, start = 0, time.perf_counter()
    with GenericEnvClient(base_url=url).sync() as env:
        result = env.reset(task_id="task_easy")
        while done < steps:
            result = env.step(ACTIONS[done % 3])
            done += 1
            if result.done:
                result = env.reset(task_id="task_easy")
    return done / (time.perf_counter() - start)


async def _http_client(url: str, task: str, steps: int, errors: list[str]) -> int:
    done = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        reply = (await http.post("/reset", json={"task_id": task})).json()
        sid = reply["session_id"]
        while done < steps:
            r = await http.post("/step", json=ACTIONS[done % 3], headers={"X-Session-Id": sid})
            if r.status_code != 200:
                errors.append(r.text)
                break
            done += 1
            if r.json()["done"]:
                await http.post("/reset", json={"task_id": task, "session_id": sid})
        await http.delete("/session", headers={"X-Session-Id": sid})
    return done


async def _ws_client(url: str, task: str, steps: int, errors: list[str]) -> int:
    done = 0
    async with ws_connect(url.replace("http", "ws", 1) + "/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"task_id": task}}))
        await ws.recv()
        while done < steps:
            await ws.send(json.dumps({"type": "step", "data": ACTIONS[done % 3]}))
            answer = json.loads(await ws.recv())
            if answer["type"] != "observation":
                errors.append(str(answer))
                break
            done += 1
            if answer["data"]["done"]:
                await ws.send(json.dumps({"type": "reset", "data": {"task_id": task}}))
                await ws.recv()
    return done


async def concurrent(url: str, clients: int, steps: int, kind: str) -> tuple[float, int]:
    errors: list[str] = []
    client = _ws_client if kind == "ws" else _http_client
    start = time.perf_counter()
    counts = await asyncio.gather(*(client(url, TASKS[i % 3], steps, errors) for i in range(clients)))
    return sum(counts) / (time.perf_counter() - start), len(errors)


async def memory_per_session(url: str, pid: int, sessions: int) -> tuple[float, float, float]:
    await asyncio.sleep(0.5)
    before = rss_mb(pid)
    sockets = []
    for i in range(sessions):
        ws = await ws_connect(url.replace("http", "ws", 1) + "/ws", max_size=None)
        await ws.send(json.dumps({"type": "reset", "data": {"task_id": TASKS[i % 3]}}))
        answer = json.loads(await ws.recv())
        assert answer["type"] == "observation", answer
        sockets.append(ws)
    await asyncio.sleep(0.5)
    after = rss_mb(pid)
    live = httpx.get(f"{url}/health").json()["sessions"]
    for ws in sockets:
        await ws.close()
    assert live == sessions, live
    return before, after, (after - before) / sessions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps of the sequential runs")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    parser.add_argument("--client-steps", type=int, default=150, help="steps per concurrent client")
    parser.add_argument("--sessions", type=int, default=128, help="open /ws sessions for the memory figure")
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as home:
        server = start_server(port, home, max(256, args.sessions + args.clients + 8))
        try:
            wait_healthy(url)
            http_sequential(url, 100)  # warm both paths (imports, caches)
            ws_sequential(url, 100)
            http = http_sequential(url, args.steps)
            ws = ws_sequential(url, args.steps)
            generic = openenv_sequential(url, args.steps)
            http_many, http_errors = asyncio.run(concurrent(url, args.clients, args.client_steps, "http"))
            ws_many, ws_errors = asyncio.run(concurrent(url, args.clients, args.client_steps, "ws"))
            before, after, per = asyncio.run(memory_per_session(url, server.pid, args.sessions))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"one client, {args.steps} steps of task_easy episodes")
    print(f"  HTTP /step (httpx keep-alive)   {http:8.0f} steps/s   1.00x")
    print(f"  /ws (websockets)                {ws:8.0f} steps/s   {ws / http:.2f}x")
    if generic is not None:
        print(f"  /ws (openenv GenericEnvClient)  {generic:8.0f} steps/s   {generic / http:.2f}x")
    print(f"{args.clients} concurrent clients x {args.client_steps} steps")
    print(f"  HTTP                            {http_many:8.0f} steps/s   1.00x   errors {http_errors}")
    print(
        f"  /ws                             {ws_many:8.0f} steps/s   {ws_many / http_many:.2f}x"
        f"   errors {ws_errors}"
    )
    print(
        f"server memory: {before:.0f} MB idle (3 tasks loaded), {after:.0f} MB with {args.sessions} "
        f"/ws sessions: {per * 1024:.0f} KB per session"
    )


if __name__ == "__main__":
    main()
