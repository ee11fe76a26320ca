"""The documentation: the MkDocs site builds with --strict (broken links, anchors, pages left
out of the nav and mkdocstrings warnings all fail it) into the sections of its nav, with the
configuration and command-line references generated from the code and long code lines that
wrap; the README stays a short front page that opens with the two commands CI runs, and no
tracked file points at notes outside the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 200

# Spelled in pieces so that this file does not name them itself.
FORBIDDEN = (
    "../" + "shared",
    "SPEC" + ".md",
    "ARCHITECTURE" + ".md",
    "DAGSTER" + "_NOTES",
    "TRAINING" + "_NOTES",
    "STYLE" + ".md",
)


def test_the_docs_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml")]
        + ["--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for page in ("index.html", "environment/index.html", "results/index.html", "forward-ledger/index.html"):
        assert (site / page).is_file(), page
    api = (site / "api" / "environment" / "index.html").read_text(encoding="utf-8")
    assert "stocker_core.env.rewards" in api and "step_reward" in api  # mkdocstrings rendered
    assert not (site / "hooks").exists()  # the build's own code is not published

    from stocker_core.agent.config import AgentConfig
    from stocker_core.config import Settings
    from stocker_core.moderator.config import TrainingConfig

    config = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "<!-- reference:" not in config
    for cls in (Settings, TrainingConfig, AgentConfig):
        prefix = cls.model_config["env_prefix"]
        absent = [name for name in cls.model_fields if f'id="{prefix.lower()}{name}"' not in config]
        assert not absent, f"{cls.__name__} fields missing from the generated page: {absent}"
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("stocker-train", "stocker-episode-run", "stocker-ledger-verify", "stocker-deploy-init"):
        assert f'id="{command}"' in cli, command
    gpu = (site / "how-to" / "train-on-a-gpu" / "index.html").read_text(encoding="utf-8")
    assert "not been measured" in gpu
    assert "stylesheets/code.css" in config  # long lines wrap (pre-wrap) on every page


def test_the_nav_has_the_anchors_sections() -> None:
    import yaml

    class Loader(yaml.SafeLoader):  # mkdocs.yml may hold !!python tags; the nav needs none
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"]
    sections = [next(iter(item)) for item in nav if isinstance(item, dict)]
    assert sections[:5] == ["Home", "Getting started", "Concepts", "How-to guides", "Reference"], sections
    css = (ROOT / "docs" / "stylesheets" / "code.css").read_text(encoding="utf-8")
    assert "pre-wrap" in css


def test_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_opens_with_the_main_job_and_the_ci_test_command() -> None:
    blocks = re.findall(r"```bash\n(.*?)\n```", README.read_text(encoding="utf-8"), flags=re.S)
    main_job, tests = blocks[0], blocks[1]
    assert main_job.startswith("python3 -m venv .venv") and main_job.endswith("stocker materialize")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert tests == ci, "README command 2 and .ci/run's command differ"


def _tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    return [ROOT / name for name in done.stdout.decode().split("\0") if name]


def _text(path: Path) -> str | None:
    """The file's text, or None for a binary (or vanished) file."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_tracked_file_names_notes_outside_the_repository() -> None:
    found = []
    for path in _tracked_files():
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            found += [f"{path.relative_to(ROOT)}:{number}: {name}" for name in FORBIDDEN if name in line]
    assert not found, "\n".join(found)
