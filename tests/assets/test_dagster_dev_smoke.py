"""`stocker ui` (dagster dev on 127.0.0.1): the asset graph over GraphQL, one partition run to
success, then SIGTERM stops dagster dev and every process it started; it starts without the
SupersessionWarning and the "dagster.yaml … will not be used" warning. One dagster dev serves
both halves: starting it is most of the cost."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from stocker_core.warehouse import Warehouse

REPO = Path(__file__).resolve().parents[2]
KEY = "AAPL|2023-08-01"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _gql(url: str, query: str, variables: dict | None = None) -> dict:
    response = httpx.post(url, json={"query": query, "variables": variables or {}}, timeout=30)
    response.raise_for_status()
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


def _parents() -> dict[int, int]:
    """{pid: parent pid} of every process (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # the command name (2nd field) may hold spaces: fields restart after its ')'
        found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":  # a zombie has exited; its parent just has not reaped it yet
            alive.add(pid)
    return alive


def _wait_for_assets(url: str, stocker: subprocess.Popen, log: Path) -> list[dict]:
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(url.replace("/graphql", "/server_info"), timeout=2).status_code == 200:
                nodes = _gql(
                    url,
                    "{ assetNodes { assetKey { path } groupName isPartitioned "
                    "repository { name location { name } } } }",
                )["assetNodes"]
                if nodes:
                    return nodes
        except httpx.HTTPError:
            pass
        assert stocker.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "dagster dev did not serve its assets within 180 s"
        time.sleep(0.25)


def _run_prices_and_indicators(url: str, selector: dict, log: Path) -> None:
    added = _gql(
        url,
        """mutation($sel: RepositorySelector!) {
          addDynamicPartition(
            partitionsDefName: "ticker", partitionKey: "AAPL", repositorySelector: $sel) {
            __typename } }""",
        {"sel": selector},
    )
    assert added["addDynamicPartition"]["__typename"] == "AddDynamicPartitionSuccess"
    tags = [
        {"key": "dagster/partition", "value": KEY},
        {"key": "dagster/partition/ticker", "value": "AAPL"},
        {"key": "dagster/partition/trading_month", "value": "2023-08-01"},
    ]
    launched = _gql(
        url,
        """mutation($params: ExecutionParams!) { launchRun(executionParams: $params) {
          __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }""",
        {
            "params": {
                "selector": {
                    **selector,
                    "jobName": "__ASSET_JOB",
                    "assetSelection": [{"path": ["prices"]}, {"path": ["indicators"]}],
                },
                "executionMetadata": {"tags": tags},
            }
        },
    )["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    deadline = time.monotonic() + 180
    status = None
    while status not in {"SUCCESS", "FAILURE", "CANCELED"}:
        assert time.monotonic() < deadline, f"run still {status} after 180 s"
        time.sleep(0.5)
        status = _gql(
            url, "query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }", {"id": run_id}
        )["runOrError"]["status"]
    assert status == "SUCCESS", log.read_text()[-3000:]


@pytest.mark.slow
def test_stocker_ui_lists_assets_runs_a_partition_and_stops_with_all_its_children(tmp_path, seed_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOCKER_", "DAGSTER_HOME"))}
    env.update(STOCKER_HOME=str(tmp_path / "home"), STOCKER_SOURCE="files", STOCKER_FILES_DIR=str(seed_dir))
    port = _free_port()
    log_path = tmp_path / "ui.log"
    log = log_path.open("wb")  # closed in the finally block
    # as a background job: SIGINT ignored, which dagster dev inherits unless it is reset
    stocker = subprocess.Popen(
        [sys.executable, "-m", "stocker_assets.cli", "ui", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    url = f"http://127.0.0.1:{port}/graphql"
    try:
        nodes = _wait_for_assets(url, stocker, log_path)
        by_key = {"/".join(n["assetKey"]["path"]): n for n in nodes}
        assert {"prices", "indicators"} <= set(by_key)
        assert by_key["prices"]["groupName"] == "market" and by_key["prices"]["isPartitioned"]
        repo = by_key["prices"]["repository"]
        selector = {"repositoryName": repo["name"], "repositoryLocationName": repo["location"]["name"]}
        _run_prices_and_indicators(url, selector, log_path)
        assert len(Warehouse(tmp_path / "home" / "stocker.duckdb").read_prices("AAPL")) == 23

        children = _descendants(stocker.pid)
        assert len(children) >= 3  # dagster dev, the webserver, the daemon (and code servers)
        stocker.send_signal(signal.SIGTERM)
        assert stocker.wait(timeout=20) == 0
        stopped_by = time.monotonic() + 15
        while _alive(children) and time.monotonic() < stopped_by:
            time.sleep(0.2)
        assert _alive(children) == set(), "left running after SIGTERM"
    finally:
        if stocker.poll() is None:
            stocker.kill()
        for pid in _alive(_descendants(stocker.pid)):
            os.kill(pid, signal.SIGKILL)
        log.close()
    output = log_path.read_text()
    assert "SupersessionWarning" not in output
    assert "will not be used" not in output
    assert "Traceback" not in output
