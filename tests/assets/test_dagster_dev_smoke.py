"""`dagster dev` on 127.0.0.1: the asset graph over GraphQL and one partition run to success."""

import os
import shutil
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


@pytest.mark.slow
def test_dagster_dev_lists_assets_and_runs_a_partition(tmp_path, seed_dir):
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copyfile(REPO / "stocker_assets" / "dagster.yaml", dagster_home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(dagster_home),
        "STOCKER_HOME": str(tmp_path / "home"),
        "STOCKER_SOURCE": "files",
        "STOCKER_FILES_DIR": str(seed_dir),
    }
    port = _free_port()
    dagster = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(REPO / "workspace.yaml"),
        "-h",
        "127.0.0.1",
        "-p",
        str(port),
    ]
    # started from a script, dagster dev ignores SIGINT/SIGTERM unless INT is reset
    log = (tmp_path / "dagster.log").open("wb")  # closed in the finally block
    process = subprocess.Popen(
        ["setsid", "env", "--default-signal=INT", *dagster],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/graphql"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200:
                    nodes = _gql(
                        url,
                        "{ assetNodes { assetKey { path } groupName isPartitioned "
                        "repository { name location { name } } } }",
                    )["assetNodes"]
                    if nodes:
                        break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, (tmp_path / "dagster.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "dagster dev did not come up in 120 s"
            time.sleep(0.25)
        by_key = {"/".join(n["assetKey"]["path"]): n for n in nodes}
        assert {"prices", "indicators"} <= set(by_key)
        assert by_key["prices"]["groupName"] == "market" and by_key["prices"]["isPartitioned"]
        repo = by_key["prices"]["repository"]
        selector = {"repositoryName": repo["name"], "repositoryLocationName": repo["location"]["name"]}

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
        assert status == "SUCCESS", (tmp_path / "dagster.log").read_text()[-3000:]
        assert len(Warehouse(tmp_path / "home" / "stocker.duckdb").read_prices("AAPL")) == 23
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
