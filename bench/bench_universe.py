"""The main job at universe size, with the 11-ticker sample's figures beside it (issue 49).

Usage: python bench/bench_universe.py [--tickers 500] [--years 10] [--groups GROUPS]
       [--no-sample] [--no-tools] [--workers 2]

In fresh homes (synthetic source, seed 7, ``STOCKER_CLOCK`` after the close of the data's
second-to-last session; the sample source on its last two sessions), each ``stocker`` command
in its own process:

- **first build**: ``stocker materialize`` (every group unless ``--groups``);
- **rerun**: the same with nothing changed;
- **new session**: the clock one session later;
- **10 more tickers** (the universe only): ``STOCKER_SYNTH_TICKERS`` + 10, same clock;
- **peak memory**: the largest sum of the resident memory of the command's process tree
  (sampled every 0.2 s), over the commands above;
- **the tools** (``--no-tools`` skips): the Dagster UI's GraphQL requests for the asset graph,
  an asset's page and a ticker × month asset's partition status (``stocker ui``), a
  ``stocker sql`` count, and the web page's episode list, compare view and report list
  (``stocker web``), each the median of three, in seconds.

The issue's bars: first build <= 45 min, peak <= 6 GB, rerun <= 60 s, new session <= 3 min,
every tool <= 3 s. Figures and the box's calibrate line: docs/results.md "Universe".
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import httpx
import psutil
from bench_scaling import START, sessions_near_end  # the synthetic market's last sessions

from stocker_core.composition import register_all

BIN = Path(sys.executable).parent
SAMPLE_DAYS = (date(2018, 8, 29), date(2018, 8, 30))
BARS = {"first build": 45 * 60, "rerun": 60, "new session": 180}

GRAPH = "{ assetNodes { assetKey { path } dependencyKeys { path } groupName isPartitioned } }"
ASSET_PAGE = """{ assetNodeOrError(assetKey: {path: ["prices"]}) { ... on AssetNode {
  description groupName partitionStats { numMaterialized numPartitions numFailed }
  assetMaterializations(limit: 1) { runId partition timestamp } } } }"""
PARTITIONS = """{ assetNodeOrError(assetKey: {path: ["prices"]}) { ... on AssetNode {
  assetPartitionStatuses { __typename ... on MultiPartitionStatuses { primaryDimensionName
    ranges { primaryDimStartKey primaryDimEndKey secondaryDim { __typename
      ... on DefaultPartitionStatuses { materializedPartitions failedPartitions }
      ... on TimePartitionStatuses { ranges { status startKey endKey } } } } } } } } }"""


def clock(day: date) -> str:
    return f"{day.isoformat()}T22:00:00Z"


def tree_rss(root: psutil.Process) -> int:
    """Resident bytes of ``root`` and its live descendants now."""
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            total += process.memory_info().rss
        except psutil.Error:  # gone meanwhile
            continue
    return total


def run(env: dict[str, str], args: list[str], timeout: float = 4 * 3600) -> tuple[float, int]:
    """(seconds, peak tree RSS bytes) of ``stocker ARGS``; exits with its output when it fails."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [str(BIN / "stocker"), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    peak, done = [0], threading.Event()

    def sample() -> None:
        root = psutil.Process(process.pid)
        while not done.wait(0.2):
            try:
                peak[0] = max(peak[0], tree_rss(root))
            except psutil.Error:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate(timeout=timeout)
    done.set()
    sampler.join()
    seconds = time.perf_counter() - began
    if process.returncode != 0:
        sys.exit(f"stocker {' '.join(args)} failed ({process.returncode}):\n{output[-4000:]}")
    return seconds, peak[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def median_seconds(call, times: int = 3) -> float:
    samples = []
    for _ in range(times):
        began = time.perf_counter()
        call()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def serving(env: dict[str, str], args: list[str], ready_url: str, log: Path) -> subprocess.Popen:
    """Start ``stocker ARGS`` in its own process group and wait until ``ready_url`` answers."""
    process = subprocess.Popen(
        [str(BIN / "stocker"), *args],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"stocker {' '.join(args)} exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(ready_url, timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    sys.exit(f"stocker {' '.join(args)} did not answer within 300 s")


def stop(process: subprocess.Popen) -> None:
    from stocker_assets.engine.ui_process import stop_group

    stop_group(process)


def tool_latencies(env: dict[str, str], home: Path) -> dict[str, float]:
    """Median seconds of the UI's GraphQL requests, `stocker sql` and the web page's views."""
    found: dict[str, float] = {}
    port = free_port()
    ui = serving(env, ["ui", "--port", str(port)], f"http://127.0.0.1:{port}/server_info", home / "ui.log")
    graphql = f"http://127.0.0.1:{port}/graphql"
    try:
        for name, query in (
            ("UI asset graph", GRAPH),
            ("UI asset page", ASSET_PAGE),
            ("UI partitions", PARTITIONS),
        ):

            def ask(query: str = query) -> None:
                answer = httpx.post(graphql, json={"query": query}, timeout=300).json()
                if "errors" in answer:
                    sys.exit(f"GraphQL error: {answer['errors']}")

            ask()  # the code location loads on the first request
            found[name] = median_seconds(ask)
    finally:
        stop(ui)
    found["stocker sql count"] = median_seconds(
        lambda: run(env, ["sql", "SELECT count(*) FROM market.prices"])
    )
    port = free_port()
    web = serving(
        env, ["web", "--port", str(port)], f"http://127.0.0.1:{port}/web/api/status", home / "web.log"
    )
    try:
        for name, path in (
            ("web episode list", "/web/api/choices"),
            ("web compare view", "/web/api/compare/episodes"),
            ("web reports", "/web/api/reports"),
        ):
            url = f"http://127.0.0.1:{port}{path}"
            found[name] = median_seconds(lambda url=url: httpx.get(url, timeout=300).raise_for_status())
    finally:
        stop(web)
    return found


def measure(
    label: str,
    env: dict[str, str],
    days: tuple[date, date],
    groups: list[str],
    more: dict | None,
    tools: bool,
) -> dict[str, float]:
    """Seconds (and peak GB) of one home's commands, and its tools' latencies."""
    figures: dict[str, float] = {}
    peaks = []
    env = {**env, "STOCKER_CLOCK": clock(days[0])}
    print(f"[{label}] first build ...", file=sys.stderr, flush=True)
    figures["first build"], peak = run(env, ["materialize", *groups])
    peaks.append(peak)
    figures["rerun"], peak = run(env, ["materialize", *groups])
    peaks.append(peak)
    env["STOCKER_CLOCK"] = clock(days[1])
    figures["new session"], peak = run(env, ["materialize", *groups])
    peaks.append(peak)
    if more:
        figures["10 more tickers"], peak = run({**env, **more}, ["materialize", *groups])
        peaks.append(peak)
    figures["peak GB"] = max(peaks) / 1e9
    if tools:
        figures.update(tool_latencies(env, Path(env["STOCKER_HOME"])))
    return figures


def base_env(tmp: str, workers: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOCKER_", "DAGSTER_HOME"))}
    env.update(STOCKER_HOME=f"{tmp}/home", DAGSTER_HOME=f"{tmp}/dagster", STOCKER_MAIN_WORKERS=str(workers))
    env.update(NO_COLOR="1", PYTHONDONTWRITEBYTECODE="")
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickers", type=int, default=500)
    parser.add_argument("--years", type=float, default=10.0)
    parser.add_argument("--groups", default="", help="comma-separated groups (default: the whole job)")
    parser.add_argument("--workers", type=int, default=2, help="STOCKER_MAIN_WORKERS (lanes)")
    parser.add_argument("--no-sample", action="store_true", help="skip the 11-ticker sample beside it")
    parser.add_argument("--no-tools", action="store_true", help="skip the UI/API latencies")
    args = parser.parse_args()
    groups = ["--groups", args.groups] if args.groups else []
    register_all()
    before, last = sessions_near_end(args.tickers, args.years)
    columns: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-universe-") as tmp:
        env = base_env(tmp, args.workers)
        env.update(
            STOCKER_SOURCE="synthetic",
            STOCKER_SYNTH_TICKERS=str(args.tickers),
            STOCKER_SYNTH_YEARS=str(args.years),
            STOCKER_SYNTH_START=START.isoformat(),
        )
        more = {"STOCKER_SYNTH_TICKERS": str(args.tickers + 10)}
        label = f"{args.tickers} x {args.years:g} y"
        columns[label] = measure(label, env, (before, last), groups, more, not args.no_tools)
    if not args.no_sample:
        with tempfile.TemporaryDirectory(prefix="bench-universe-sample-") as tmp:
            env = {**base_env(tmp, args.workers), "STOCKER_SOURCE": "sample"}
            columns["sample (11)"] = measure("sample", env, SAMPLE_DAYS, groups, None, not args.no_tools)
    names = list(dict.fromkeys(name for figures in columns.values() for name in figures))
    print(f"{'':24}" + "".join(f"{label:>16}" for label in columns) + "   bar")
    for name in names:
        cells = "".join(
            f"{columns[label][name]:>16.2f}" if name in columns[label] else f"{'-':>16}" for label in columns
        )
        bar = BARS.get(
            name, 6.0 if name == "peak GB" else 3.0 if name.startswith(("UI", "web", "stocker")) else None
        )
        print(f"{name:24}{cells}   {'<= ' + format(bar, 'g') if bar else ''}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (seconds unless GB)")


if __name__ == "__main__":
    main()
