"""The image's default command, started outside Docker (no engine here) with the image's
environment moved under a temp folder: openenv 0.10's runtime graders pass on openenv.yaml's
own plan (validation/runtime.json) and reward range, AutoEnv finds the installed client
distribution (openenv-stocker) without skip_install, and the oracle script plays the ideal
trajectory, scoring what the in-process ideal policy scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from openenv.validation.graders import Subject
from openenv.validation.graders.runtime import (
    ObservationSchemaGrader,
    RewardWellFormedGrader,
    StateContractGrader,
)
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.runtime.collector import collect_runtime_evidence
from openenv.validation.runtime.contracts import load_runtime_plan
from openenv_package_testing import ROOT, env_of, exec_form, instructions
from server_testing import free_port

pytestmark = pytest.mark.slow


def _image_env(tmp: Path) -> dict[str, str]:
    """The Dockerfile's ENV with /tmp moved to ``tmp``; the caller's PATH and no API key."""
    env = {key: value.replace("/tmp", str(tmp), 1) for key, value in env_of().items()}
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")}
    return {**keep, **env}


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    """`stocker serve` as the Dockerfile's CMD says, on 127.0.0.1 and a free port."""
    tmp = tmp_path_factory.mktemp("image-tmp")
    env = _image_env(tmp)
    argv = exec_form([rest for key, rest in instructions() if key == "CMD"][-1])
    port = free_port()
    argv[argv.index("--host") + 1], argv[argv.index("--port") + 1] = "127.0.0.1", str(port)
    argv[0] = str(Path(sys.executable).with_name(argv[0]))
    log = (tmp / "serve.log").open("w")
    process = subprocess.Popen(argv, cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp / "serve.log").read_text()[-3000:]
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("stocker serve did not answer /health in 120 s")
        yield url, env
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_the_runtime_graders_pass_on_the_declared_plan(served) -> None:
    url, _ = served
    manifest = OpenEnvYamlParser().parse(ROOT)
    plan = load_runtime_plan(ROOT, manifest.execution)
    evidence = collect_runtime_evidence(url, plan, episode_timeout_s=manifest.resources.episode_timeout_s)
    assert evidence.failure_reason is None, evidence.failure_reason
    assert [e.operation for e in evidence.exchanges].count("step") == len(plan.actions)
    subject = Subject(root=ROOT, manifest=manifest, image_ref=None, running=None, outputs_dir=ROOT)
    subject = replace(subject, runtime_evidence=evidence)
    for grader in (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader()):
        result = grader.run(subject)
        assert result.status.value == "pass", (grader.check_id, result.evidence)


def test_autoenv_finds_the_installed_client_distribution(served, tmp_path, monkeypatch) -> None:
    from openenv import AutoEnv
    from openenv.auto._discovery import reset_discovery

    from stocker_core.env.openenv_client import StockerOpenEnv

    url, _ = served
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no discovery cache from before the install
    reset_discovery()
    try:
        client = AutoEnv.from_env("stocker", base_url=url)
        assert isinstance(client, StockerOpenEnv)
        with client.sync() as env:
            result = env.reset(task_id="task_easy")
            result = env.step({"side": "buy", "quantity": 1})
            assert -1.0 <= result.reward <= 1.0 and result.observation.position == 1
    finally:
        reset_discovery()


def test_the_oracle_script_plays_the_ideal_trajectory(served) -> None:
    from stocker_core.config import Settings
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.episode import load_episode
    from stocker_core.env.policies import IdealPolicy, run_episode

    url, env = served
    script = ROOT / "validation" / "oracle.py"
    argv = [sys.executable, str(script), "--url", url, "--task", "task_medium"]
    played = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=env["HOME"])
    assert played.returncode == 0, played.stderr[-3000:]
    scored = json.loads(played.stdout)
    settings = Settings(home=Path(env["STOCKER_HOME"]), source="sample")
    trading = TradingEnv(load_episode("task_medium", settings), settings)
    expected = run_episode(trading, IdealPolicy(trading))["rewards"]
    assert scored["rewards"] == pytest.approx(expected, abs=1e-12)
    assert all(-1.0 <= reward <= 1.0 for reward in scored["rewards"])
    assert 0.6 < scored["mean_reward"] < 0.8  # what openenv.yaml's oracle_tolerance comment says
