"""Every code block of the README and of the docs pages runs in the tests as written, or says
just above it, in an HTML comment, why it is only an illustration:

    <!-- illustrative: needs a GPU; not measured -->

    ```bash
    stocker train
    ```

- a ``python`` block runs: all the unmarked Python blocks of a page, in order, in one fresh
  interpreter (one namespace, like a notebook) in an empty folder with its own
  ``STOCKER_HOME`` on the default offline source, on CPU (``test_python_blocks_run``);
- every command of an unmarked ``bash`` block is run or excused, with the reason, by
  ``tests/test_readme_examples.py`` (``RUN`` / ``NOT_RUN``);
- any other block (output, formulas, YAML, a cron line) is marked illustrative.

A new block fails ``test_every_block_runs_or_is_marked`` until it is sorted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RUNNABLE = ("python", "bash")

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
MARK = re.compile(r"^[ \t]*<!--[ \t]*illustrative:(?P<reason>.*?)-->[ \t]*$")


@dataclass(frozen=True)
class Block:
    """A fenced code block of a Markdown file."""

    path: Path
    line: int
    """1-based line of the opening fence."""
    language: str
    code: str
    """The block's lines, the fence's indentation taken off."""
    illustrative: str | None
    """The reason of the ``<!-- illustrative: … -->`` line above the fence, None if unmarked."""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def documented_files() -> list[Path]:
    """The README and every page of the docs site."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def code_blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` with their language and their marker, if any (the line
    above the fence, blank lines skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : end]
        ]
        above = i - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        mark = MARK.match(lines[above]) if above >= 0 else None
        blocks.append(
            Block(
                path=path,
                line=i + 1,
                language=(opening["info"].split() or [""])[0].lower(),
                code="\n".join(body),
                illustrative=mark["reason"].strip() if mark else None,
            )
        )
        i = end + 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in documented_files() for block in code_blocks(path)]


def python_pages() -> list[Path]:
    """Pages with at least one unmarked Python block."""
    return sorted(
        {b.path for b in all_blocks() if b.language == "python" and b.illustrative is None},
        key=lambda p: (p != README, str(p)),
    )


# --- the marking rule ------------------------------------------------------------------------


def test_the_parser_reads_fences_markers_and_indented_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n<!-- illustrative: needs a GPU -->\n\n```bash\nstocker train\n```\n\n"
        "1. a step\n\n    ```python\n    print(1)\n\n    x = 2\n    ```\n\n```\nplain\n```\n",
        encoding="utf-8",
    )
    marked, indented, bare = code_blocks(page)
    assert (marked.language, marked.code, marked.illustrative) == ("bash", "stocker train", "needs a GPU")
    assert (indented.language, indented.code, indented.illustrative) == ("python", "print(1)\n\nx = 2", None)
    assert (bare.language, bare.line) == ("", 17)


def test_every_block_runs_or_is_marked() -> None:
    """A block is Python or bash (both checked), or marked illustrative with a reason."""
    problems = []
    for block in all_blocks():
        if block.illustrative == "":
            problems.append(f"{block.where}: an illustrative marker without its reason")
        elif block.illustrative is None and block.language not in RUNNABLE:
            problems.append(
                f"{block.where}: a ```{block.language or '(no language)'} block: mark it "
                "<!-- illustrative: why --> or make it python/bash that the tests run"
            )
    assert not problems, "\n".join(problems)


def test_the_docs_are_read() -> None:
    pages = {b.path.relative_to(ROOT).as_posix() for b in all_blocks()}
    assert {"README.md", "docs/train-with-trl.md", "docs/how-to/train-on-a-gpu.md"} <= pages


# --- running the Python blocks ---------------------------------------------------------------

# Pages whose Python blocks talk to a server the page starts in a bash block: the test starts
# that documented command first and waits for the URL.
SERVERS = {
    "docs/use-from-openenv.md": ("stocker serve --port 8765 --no-web", "http://127.0.0.1:8765/health"),
}
NEEDS = {"docs/use-from-openenv.md": "openenv"}  # the module a page imports (the dev install has it)

DRIVER = """
import json, sys
namespace = {"__name__": "__main__"}
for block in json.load(open(sys.argv[1], encoding="utf-8")):
    print(f"--- {block['where']}", flush=True)
    source = "\\n" * block["line"] + block["code"]  # tracebacks name the page's own line numbers
    exec(compile(source, block["path"], "exec"), namespace)
"""


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        STOCKER_HOME=str(work / "home"),
        DAGSTER_HOME=str(work / "dagster"),
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PATH=bin_dir + os.pathsep + env.get("PATH", ""),
        MPLBACKEND="Agg",
        HF_HUB_OFFLINE="1",  # nothing here downloads
        TRL_EXPERIMENTAL_SILENCE="1",
        TOKENIZERS_PARALLELISM="false",
        OMP_NUM_THREADS="1",
        NO_COLOR="1",
        CUDA_VISIBLE_DEVICES="",  # on CPU, as the docs promise, whatever the machine has
    )
    return env


def _port_is_free(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


def _start_server(command: str, health: str, work: Path, env: dict[str, str]) -> subprocess.Popen:
    if not _port_is_free(health):
        pytest.skip(f"{health} is taken by another process: the page's server cannot start")
    server = subprocess.Popen(
        command.split(), cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"{command!r} exited {server.returncode}: {server.stderr.read()[-2000:]}")
        try:
            with urllib.request.urlopen(health, timeout=2) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise AssertionError(f"{command!r} did not answer {health} within 90 s")


SLOW = {  # pages whose blocks take more than a few seconds: the fast lane (-m "not slow") skips them
    "docs/train-with-trl.md": "GRPOTrainer, one step of the tiny model (~15 s)",
    "docs/use-from-openenv.md": "a server started and played over /ws (~8 s)",
}


def _page_params() -> list:
    params = []
    for page in python_pages():
        name = page.relative_to(ROOT).as_posix()
        params.append(pytest.param(page, id=name, marks=[pytest.mark.slow] if name in SLOW else []))
    return params


@pytest.mark.parametrize("page", _page_params())
def test_python_blocks_run(page: Path, tmp_path: Path) -> None:
    """The page's unmarked Python blocks, in order, in one interpreter, exit 0."""
    name = page.relative_to(ROOT).as_posix()
    if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
        pytest.skip(f"{name} needs {NEEDS[name]} (README command 2 installs it)")
    work = tmp_path / "work"
    (work / "dagster").mkdir(parents=True)
    env = _env(work)
    blocks = [b for b in code_blocks(page) if b.language == "python" and b.illustrative is None]
    script = tmp_path / "blocks.json"
    script.write_text(
        json.dumps([{"where": b.where, "path": str(b.path), "line": b.line, "code": b.code} for b in blocks]),
        encoding="utf-8",
    )
    server = _start_server(*SERVERS[name], work, env) if name in SERVERS else None
    try:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(script)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    output = f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    assert done.returncode == 0, f"{name}: exit {done.returncode}\n{output}"
