"""Load on the environment server: N concurrent clients doing reset + step loops.

Starts ``stocker serve``'s app (uvicorn, one process) on a free loopback port with the
seed fixture as the ``files`` source, then runs ``--clients`` asyncio clients (httpx)
for ``--duration`` seconds: each resets its own session on a task and steps it (hold /
buy 1 / sell 1) to the end, then resets again. Prints requests/s, p50/p99 latency per
route and errors. The first resets of each task load it (cold cache), as on a fresh server.

    python bench/bench_server.py                       # quick: 50 clients, 10 s
    python bench/bench_server.py --clients 200 --duration 30   # the issue's figure
    python bench/bench_server.py --clients 200 --duration 30 --procs 8   # on a many-core box
    python bench/bench_server.py --client raw --web   # also `stocker serve`'s default app (with /web)

Reference to beat (200 clients, 30 s, loopback): 745 req/s, p99 463 ms, 0 errors,
``/reset`` p99 5.4 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import httpx
import numpy as np

from stocker_core.config import REFERENCE_TASKS_DIR

SEED_DIR = REFERENCE_TASKS_DIR
TASKS = ("task_easy", "task_medium", "task_hard")
ACTIONS = ({"side": "hold", "quantity": 0}, {"side": "buy", "quantity": 1}, {"side": "sell", "quantity": 1})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    port: int, home: str, max_sessions: int, preload: bool, web: bool = False
) -> subprocess.Popen:
    """The server in its own process (so client and server do not share a GIL); with ``web``
    the app ``stocker serve`` runs by default (the page mounted at /web beside it)."""
    if not SEED_DIR.is_dir():
        sys.exit(f"seed fixture not found at {SEED_DIR}")
    env = {**os.environ, "STOCKER_SOURCE": "files", "STOCKER_FILES_DIR": str(SEED_DIR), "STOCKER_HOME": home}
    env.pop("STOCKER_API_KEY", None)
    factory = ("stocker_core.web.app", "create_web_app") if web else ("stocker_core.env.server", "create_app")
    # every client of the bench comes from 127.0.0.1: the per-client quota is the whole server's
    code = (
        "import uvicorn\n"
        "from stocker_core.composition import register_all\n"
        "register_all()\n"  # as stocker serve does
        f"from {factory[0]} import {factory[1]} as factory\n"
        f"app = factory(api_key='', max_sessions={max_sessions}, max_per_client={max_sessions}, "
        f"preload={TASKS if preload else ()!r})\n"
        f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='warning', access_log=False, "
        "backlog=4096)\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def wait_healthy(url: str, timeout_s: float = 60.0) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    sys.exit("the server did not start")


class RawResponse:
    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code, self._body = status_code, body

    def json(self) -> dict:
        return json.loads(self._body)


class RawConnection:
    """One keep-alive HTTP/1.1 connection with hand-written requests: a load generator that
    costs far less client CPU than httpx, so a 2-core box measures the server, not the client."""

    def __init__(self, url: str) -> None:
        host_port = url.split("://", 1)[1]
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, json: dict, headers: dict[str, str]) -> RawResponse:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = _json_bytes(json)
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n"
        )
        self.writer.write(head.encode() + body)
        try:
            status_line = await self.reader.readline()
            status, length = int(status_line.split()[1]), 0
            while (line := await self.reader.readline()) not in (b"\r\n", b""):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            payload = await self.reader.readexactly(length)
        except (OSError, IndexError, ValueError, asyncio.IncompleteReadError) as exc:
            self.writer = None
            raise httpx.TransportError(str(exc)) from exc
        return RawResponse(status, payload)


def _json_bytes(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


async def client_loop(
    http: httpx.AsyncClient | RawConnection,
    index: int,
    stop_at: float,
    latencies: dict[str, list[float]],
    errors: dict[str, int],
) -> None:
    """Reset, step to the end, repeat until ``stop_at``."""
    task = TASKS[index % len(TASKS)]
    session: str | None = None
    step = 0

    async def call(route: str, method: str, path: str, body: dict) -> dict | None:
        headers = {"X-Session-Id": session} if session else {}
        start = time.perf_counter()
        try:
            response = await http.request(method, path, json=body, headers=headers)
        except httpx.HTTPError as exc:
            errors[f"{route} {type(exc).__name__}"] += 1
            return None
        latencies[route].append(time.perf_counter() - start)
        if response.status_code != 200:
            errors[f"{route} HTTP {response.status_code}"] += 1
            return None
        return response.json()

    while time.perf_counter() < stop_at:
        route = "/reset" if session else "/reset*"  # * the client's first: may wait for a cold load
        out = await call(route, "POST", "/reset", {"task_id": task, "session_id": session})
        if out is None:
            await asyncio.sleep(0.05)
            continue
        session, done = out["session_id"], False
        while not done and time.perf_counter() < stop_at:
            out = await call("/step", "POST", "/step", ACTIONS[step % 3])
            step += 1
            if out is None:
                break
            done = out["done"]
    if session is not None:  # free the slot: a later client from this address (warm_resets) needs one
        with contextlib.suppress(httpx.HTTPError):
            await http.request("DELETE", "/session", json={}, headers={"X-Session-Id": session})


async def run_load(
    url: str, first: int, clients: int, duration_s: float, raw: bool = False
) -> tuple[dict, dict, float]:
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    if raw:
        start = time.perf_counter()
        stop_at = start + duration_s
        await asyncio.gather(
            *(
                client_loop(RawConnection(url), i, stop_at, latencies, errors)
                for i in range(first, first + clients)
            )
        )
        return latencies, errors, time.perf_counter() - start
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as http:
        start = time.perf_counter()
        stop_at = start + duration_s
        await asyncio.gather(
            *(client_loop(http, i, stop_at, latencies, errors) for i in range(first, first + clients))
        )
        elapsed = time.perf_counter() - start
    return latencies, errors, elapsed


def load_process(
    url: str, first: int, clients: int, duration_s: float, raw: bool = False
) -> tuple[dict, dict, float, float]:
    """One client process (clients ``first``…): latencies, errors, seconds, its CPU seconds."""
    cpu = time.process_time()
    latencies, errors, elapsed = asyncio.run(run_load(url, first, clients, duration_s, raw))
    return dict(latencies), dict(errors), elapsed, time.process_time() - cpu


def run_processes(
    url: str, clients: int, duration_s: float, procs: int, raw: bool = False
) -> tuple[dict, dict, float, float]:
    """The clients spread over ``procs`` processes (one Python process saturates near
    250 req/s: httpx costs ~4 ms of client CPU per request)."""
    if procs <= 1:
        return load_process(url, 0, clients, duration_s, raw)
    shares = [len(part) for part in np.array_split(np.arange(clients), procs)]
    firsts = np.cumsum([0, *shares[:-1]])
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    with ProcessPoolExecutor(procs, mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(load_process, url, int(f), n, duration_s, raw)
            for f, n in zip(firsts, shares, strict=True)
        ]
        results = [future.result() for future in futures]
    for lat, err, _, _ in results:
        for route, values in lat.items():
            latencies[route].extend(values)
        for kind, count in err.items():
            errors[kind] += count
    return latencies, errors, max(r[2] for r in results), sum(r[3] for r in results)


def warm_resets(url: str, n: int = 100) -> np.ndarray:
    """Latencies (ms) of ``n`` back-to-back resets of one session on a loaded task."""
    times = []
    with httpx.Client(base_url=url, timeout=60) as http:
        session = None
        for i in range(n):
            start = time.perf_counter()
            response = http.post("/reset", json={"task_id": TASKS[i % 3], "session_id": session})
            times.append((time.perf_counter() - start) * 1e3)
            if response.status_code != 200:
                sys.exit(f"warm /reset answered HTTP {response.status_code}: {response.text[:200]}")
            session = response.json()["session_id"]
        if session is not None:
            http.request("DELETE", "/session", headers={"X-Session-Id": session})
    return np.array(times)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(
    latencies: dict[str, list[float]],
    errors: dict[str, int],
    elapsed: float,
    clients: int,
    server_cpu: float,
    client_cpu: float,
) -> None:
    total = sum(len(v) for v in latencies.values())
    every = np.array([x for v in latencies.values() for x in v]) * 1e3
    print(f"{clients} clients, {elapsed:.1f} s: {total} requests, {total / elapsed:.0f} req/s, "
          f"{sum(errors.values())} errors; server CPU {server_cpu:.1f} s = "
          f"{server_cpu / max(total, 1) * 1e3:.2f} ms per request, clients' CPU "
          f"{client_cpu / max(total, 1) * 1e3:.2f} ms per request (load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)")  # fmt: skip
    print(f"{'route':<8} {'requests':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for route, values in [("all", every), *((r, np.array(v) * 1e3) for r, v in sorted(latencies.items()))]:
        if len(values):
            print(f"{route:<8} {len(values):>9} {np.percentile(values, 50):>8.1f} "
                  f"{np.percentile(values, 99):>8.1f} {values.max():>8.1f}")  # fmt: skip
    for kind, count in sorted(errors.items()):
        print(f"error {kind}: {count}")
    print("/reset* = a client's first reset (with --cold, the first of each task loads it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of load")
    parser.add_argument("--cold", action="store_true", help="no preload: the first resets load the tasks")
    parser.add_argument("--procs", type=int, default=1, help="client processes (more on a many-core box)")
    parser.add_argument(
        "--client",
        choices=("httpx", "raw"),
        default="httpx",
        help="load generator: httpx (~3.5 ms client CPU a request) or raw keep-alive sockets (far less)",
    )
    parser.add_argument(
        "--web",
        action="store_true",
        help="also measure `stocker serve`'s default app (the page at /web beside the server), "
        "right after the server alone, and print the ratio",
    )
    args = parser.parse_args()
    rates = {}
    for web in (False, True) if args.web else (False,):
        rates[web] = measure(args, web)
    if args.web:
        (alone_rate, alone_cpu), (web_rate, web_cpu) = rates[False], rates[True]
        print(f"with /web mounted: {web_rate / alone_rate:.2f}x the requests/s of the server alone, "
              f"{web_cpu / alone_cpu:.2f}x its server CPU per request")  # fmt: skip


def measure(args: argparse.Namespace, web: bool) -> tuple[float, float]:
    """Run the load against one server; print its report; (requests/s, server ms per request)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        server = start_server(port, home, max_sessions=args.clients + 16, preload=not args.cold, web=web)
        try:
            wait_healthy(url)
            print(
                ("stocker serve (environment + /web)" if web else "environment server alone")
                + f" up in {time.perf_counter() - started:.1f} s"
                + ("" if args.cold else " (3 tasks preloaded)")
            )
            cpu_before = cpu_seconds(server.pid)
            latencies, errors, elapsed, client_cpu = run_processes(
                url, args.clients, args.duration, args.procs, args.client == "raw"
            )
            server_cpu = cpu_seconds(server.pid) - cpu_before
            resets = warm_resets(url)
        finally:
            server.terminate()
            server.wait(timeout=10)
    report(latencies, errors, elapsed, args.clients, server_cpu, client_cpu)
    print(f"warm /reset, one client, {len(resets)} in a row: p50 {np.percentile(resets, 50):.1f} ms, "
          f"p99 {np.percentile(resets, 99):.1f} ms")  # fmt: skip
    total = sum(len(v) for v in latencies.values())
    return total / elapsed, server_cpu / max(total, 1) * 1e3


if __name__ == "__main__":
    main()
