"""The repository is an OpenEnv 0.10 package, judged by openenv's own code: `openenv validate .
--level static` passes, the runtime plan loads as the validator loads it, the declared tools are
the server's, and `openenv catalog build` finds the environment with its tools."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.runner import _DIGEST_EXCLUDED_DIRS
from openenv.validation.runtime.contracts import load_runtime_plan
from openenv_package_testing import ROOT, has_git, openenv, report

from stocker_core.env.actions import Action
from stocker_core.env.tasks import TASKS

UNVERIFIED = "package source could not be verified"


def _non_regular_files(root: Path) -> list[str]:
    """What makes the validator's source digest fail: links, FIFOs, sockets, devices. The
    excluded folders are skipped, not walked (.venv alone holds most of the tree's entries)."""
    found = []
    for folder, folders, files in os.walk(root):  # links to folders are listed, never followed
        folders[:] = [name for name in folders if name not in _DIGEST_EXCLUDED_DIRS]
        for name in folders + [name for name in files if name not in _DIGEST_EXCLUDED_DIRS]:
            path = Path(folder, name)
            mode = path.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                found.append(path.relative_to(root).as_posix())
    return found


def test_the_package_tree_holds_only_files_and_folders() -> None:
    assert _non_regular_files(ROOT) == [], (
        "openenv validate refuses symbolic links, FIFOs and sockets anywhere in the package "
        "(data/ included, .git, .venv, __pycache__ and outputs/ excepted): remove them"
    )


@pytest.mark.slow  # the openenv command starts in ~5-15 s
def test_openenv_validate_static_passes_on_the_repository() -> None:
    for _ in range(3):  # another test may add or remove a file while the digest reads the tree
        result = openenv("validate", ".", "--level", "static", "--json")
        if UNVERIFIED not in result.stdout:
            break
    found = report(result)
    assert found["verdict"] == "pass", result.stdout[-3000:]
    assert result.returncode == 0
    checks = {r["check_id"]: r["status"] for r in found["results"]}
    assert checks == {"static.manifest": "pass"}
    manifest = found["manifest"]
    assert manifest["manifest_schema_version"] == "2" and manifest["reward"]["range"] == [-1.0, 1.0]
    assert manifest["execution"]["dockerfile"] == "deploy/Dockerfile"


def test_the_runtime_plan_loads_as_the_validator_loads_it() -> None:
    manifest = OpenEnvYamlParser().parse(ROOT)
    plan = load_runtime_plan(ROOT, manifest.execution)
    assert plan.reset.options == {"task_id": "task_easy"}
    assert all(Action.model_validate(action) for action in plan.actions)
    oracle = manifest.capabilities.oracle
    assert oracle is not None and (ROOT / oracle.location).is_file()
    assert (ROOT / manifest.execution.dockerfile).is_file()
    assert manifest.capabilities.declared_task_count == {"reference": len(TASKS)}


def test_declared_tools_are_the_servers_and_the_catalogs() -> None:
    from stocker_core.composition import register_all
    from stocker_core.env.server_mcp import tool_names

    register_all()
    declared = OpenEnvYamlParser().parse(ROOT).capabilities.declared_tools
    discovery = json.loads((ROOT / "envs/stocker/discovery.json").read_text())
    listed = json.loads((ROOT / "envs/stocker/tools.json").read_text())["tools"]
    research = json.loads((ROOT / "stocker_core/agent/tool_schemas.json").read_text())
    assert declared == discovery["agent_tools"]["names"] == [tool["name"] for tool in listed]
    assert declared[3:] == [tool["function"]["name"] for tool in research]
    assert declared == tool_names()


@pytest.mark.slow
@pytest.mark.skipif(not has_git(), reason="openenv catalog build reads a git repository")
def test_openenv_catalog_build_finds_stocker_with_its_tools(tmp_path) -> None:
    # the catalog reads committed files only: commit this working tree's envs/ in a scratch repository
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "envs", repo / "envs")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "envs"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    out = tmp_path / "catalog.json"
    built = openenv(
        "catalog",
        "build",
        "--repository",
        str(repo),
        "--repository-uri",
        "https://github.com/stocker-env/stocker.git",
        "--publisher",
        "stocker.example.org",
        "--output",
        str(out),
    )
    assert built.returncode == 0, built.stderr[-2000:]
    assert "1 records" in built.stderr and "complete=true" in built.stderr
    (entry,) = json.loads(out.read_text())["entries"]
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    assert entry["displayName"] == "stocker" and entry["description"] == manifest["description"]
    assert entry["capabilities"] == manifest["validation"]["capabilities"]["declared_tools"]
    assert {"trading", "tool-use"} <= set(entry["tags"]) and len(entry["representativeQueries"]) >= 2
    assert entry["data"]["source"]["path"] == "envs/stocker" and entry["data"]["license"] == "unknown"
    found = openenv("discover", "an environment to trade a stock with tools", "--catalog", str(out), "--json")
    assert found.returncode == 0, found.stderr[-2000:]
    assert [r["displayName"] for r in json.loads(found.stdout)["results"]] == ["stocker"]
