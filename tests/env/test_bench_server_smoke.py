"""``bench/bench_server.py`` runs in the fast lane as a smoke test (issue 43, item 3): more
clients from one address than the default per-client quota (32) all play without a 429, and
the bench's own warm resets afterwards find a free slot (it failed with ``KeyError:
'session_id'`` at ``--clients 200``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_server.py"


def test_the_server_bench_runs_more_clients_than_the_default_quota(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
    env["STOCKER_HOME"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, str(BENCH), "--clients", "40", "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in output, output
    summary = re.search(r"40 clients, [\d.]+ s: (\d+) requests, \d+ req/s, (\d+) errors", output)
    assert summary, output
    assert int(summary.group(1)) > 40 and int(summary.group(2)) == 0, output
    assert "warm /reset, one client, 100 in a row" in output, output
