"""Helpers of the OpenEnv packaging tests: the repository root, the `openenv` command, the
Dockerfile's instructions."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def openenv(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run openenv 0.10's own command (the venv's script, else ``python -m openenv.cli``)."""
    script = Path(sys.executable).with_name("openenv")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "openenv.cli"]
    environment = {**os.environ, **(env or {})}
    argv = [*command, *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300, env=environment)


def report(result: subprocess.CompletedProcess) -> dict:
    """The JSON report a ``--json`` run printed (the whole stdout)."""
    assert result.stdout.strip(), result.stderr[-2000:]
    return json.loads(result.stdout)


def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        pending += " " + stripped.removesuffix("\\").strip()
        if stripped.endswith("\\"):
            continue
        keyword, _, rest = pending.strip().partition(" ")
        found.append((keyword.upper(), rest.strip()))
        pending = ""
    return found


def exec_form(arguments: str) -> list[str]:
    """The argv of an exec-form CMD/HEALTHCHECK CMD (a JSON array), or the shell form split."""
    text = arguments.strip()
    return json.loads(text) if text.startswith("[") else shlex.split(text)


def env_of(path: Path = DOCKERFILE) -> dict[str, str]:
    """Every ENV of the Dockerfile (``KEY=value`` pairs)."""
    values: dict[str, str] = {}
    for keyword, rest in instructions(path):
        if keyword == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                values[key] = value
    return values


def has_git() -> bool:
    return shutil.which("git") is not None
