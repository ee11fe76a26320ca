"""``stocker check-learning``: does the training loop learn? The run of the learning check,
which drives the pipeline, so it lives in the layer that owns Dagster; the library keeps its
configuration and its verdict (``stocker_core.moderator.learning_check``).

1. ``STOCKER_SOURCE=synthetic`` in a temporary home: ``stocker materialize`` builds the
   market, env, text and council groups (a subprocess: the real assets, their checks and
   the warehouse), then the chronological splits.
2. The moderator (base → SFT → policy gradient) and the agent (warm start → decision fit → RL) train on
   the train split with their own configurations, exactly as the training assets do.
3. ``evaluation.backtest_partitions`` plays the policies on the test split's
   non-overlapping episodes, every ticker pooled, and ``learning_check.verdicts`` judges
   each against buy-and-hold (the statistics of ``evaluation.stats``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from stocker_core.cli_support import EXIT_FAILED, fail
from stocker_core.config import Settings, use_settings
from stocker_core.errors import StockerError
from stocker_core.settings.values import MAX_SEED

if TYPE_CHECKING:  # the check's library loads pandas: imported where used, so `stocker --help` stays fast
    from stocker_core.moderator.learning_check import LearningCheckConfig


DATA_GROUPS = "market,env,text,council"
SKIPPED = "charts,ideal_trajectories"
"""Assets nothing in the check reads: chart PNGs (the rule council reads bars) and the stored
ideal paths (the environment solves its own; the SFT teacher uses that)."""

Say = Callable[[str], None]


commands = typer.Typer()
"""What this area adds to ``stocker``: ``check-learning``."""


def _materialize(config: LearningCheckConfig, home: Path, say: Say) -> None:
    env = {**os.environ, **config.environment(home)}
    (home / "dagster").mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "stocker_assets.cli",
        "materialize",
        "--groups",
        DATA_GROUPS,
        "--skip",
        SKIPPED,
    ]
    say(
        f"building the synthetic market in {home}: "
        f"stocker materialize --groups {DATA_GROUPS} --skip {SKIPPED}"
    )
    started = time.perf_counter()
    tail: list[str] = []
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        for line in process.stdout or ():
            line = line.rstrip()
            tail = [*tail[-24:], line]
            if line:
                say(f"  materialize: {line}")
    if process.returncode != 0:
        from stocker_core.moderator.learning_check import LearningCheckError

        raise LearningCheckError("materializing the synthetic market failed:\n" + "\n".join(tail))
    say(f"market built in {time.perf_counter() - started:.0f}s")


def settings_for(config: LearningCheckConfig, home: Path) -> Settings:
    """The Settings of the check's market (the same variables the subprocess saw)."""
    saved = {k: os.environ.get(k) for k in config.environment(home)}
    os.environ.update(config.environment(home))
    try:
        return Settings()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_learning_check(
    config: LearningCheckConfig, home: Path | None = None, say: Say | None = None
) -> dict[str, Any]:
    """Build, train, evaluate; the JSON-ready result (``ic``, ``seed``, ``tickers``,
    ``windows``, ``policies``, ``verdict``, ``seconds``)."""
    say = say or (lambda message: None)
    started = time.perf_counter()
    home = Path(home) if home is not None else Path(tempfile.mkdtemp(prefix="stocker-learning-"))
    stage_clock = StageClock()
    _materialize(config, home, say)
    stage_clock.done["materialize"] = stage_clock.lap()
    settings = settings_for(config, home)
    with use_settings(settings):
        return _train_and_judge(config, settings, say, started, stage_clock)


class StageClock:
    """Wall and CPU seconds (user + system, this process and its finished children: the
    materialize subprocess) of each stage of the check."""

    def __init__(self) -> None:
        self.wall, self.cpu_at = time.perf_counter(), self.cpu()
        self.done: dict[str, dict[str, float]] = {}

    @staticmethod
    def cpu() -> float:
        import resource

        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def lap(self) -> dict[str, float]:
        wall, cpu = time.perf_counter(), self.cpu()
        lap = {"wall_seconds": round(wall - self.wall, 1), "cpu_seconds": round(cpu - self.cpu_at, 1)}
        self.wall, self.cpu_at = wall, cpu
        return lap


def trainable_parameters(reports: Sequence[Any]) -> int | None:
    """Weights the moderator's last stage trains (its adapter, and a fields head's weights)."""
    for report in reversed(reports):
        if report.stage != "base" and "trainable_parameters" in report.extra:
            return int(report.extra["trainable_parameters"])
    return None


def moderator_stages(reports: Sequence[Any]) -> dict[str, Any]:
    """Each moderator stage's training and held-out play cost (``training.train``)."""
    return {f"moderator_{r.stage}": r.extra.get("cost", {}) for r in reports}


def _train_and_judge(
    config: LearningCheckConfig, settings: Settings, say: Say, started: float, stage_clock: StageClock
) -> dict[str, Any]:
    import pandas as pd

    from stocker_core.agent.config import agent_config
    from stocker_core.agent.training import train_agent
    from stocker_core.evaluation.splits import SplitConfig
    from stocker_core.evaluation.steps import backtest_partitions, compute_and_store_splits
    from stocker_core.language_model.runtime import EtaProgress
    from stocker_core.moderator.config import load_config
    from stocker_core.moderator.learning_check import verdict_lines, verdicts
    from stocker_core.moderator.training import train
    from stocker_core.warehouse.db import Warehouse

    warehouse = Warehouse(settings.warehouse_path)
    train_share, valid_share, test_share = config.split
    splits = compute_and_store_splits(warehouse, SplitConfig(train_share, valid_share, test_share))
    tickers = sorted({r.ticker for r in splits.ranges})
    say(f"splits of {len(tickers)} tickers")
    stages: dict[str, Any] = {"splits": stage_clock.lap()}

    progress = EtaProgress(say, prefix="moderator ")
    moderator = load_config(**config.moderator_overrides())
    reports = train(moderator, settings, progress=progress)
    for report in reports:
        say(f"moderator_{report.stage}: {report.wall_seconds:.0f}s, {report.steps} steps")
    stages["moderator"] = stage_clock.lap()
    agent = None
    if config.trains_agent:
        agent = train_agent(agent_config(**config.agent), settings, warehouse, progress=say)
        say(f"agent_rl: {agent.wall_seconds:.0f}s")
        stages["agent"] = stage_clock.lap()
    else:
        say(f"agent: not trained with model {config.model} (the agent trains in the tiny model's check only)")

    test_keys = _test_keys(warehouse, splits)
    policies = list(config.played())
    say(f"backtesting {len(policies)} policies on {len(test_keys)} non-overlapping test windows")
    played = backtest_partitions(settings, warehouse, test_keys, policies, seed=config.seed)
    stages["backtests"] = stage_clock.lap()
    rows = pd.DataFrame([row for t in played for b in t.results.values() for row in b.rows()])
    failures = {name: why for t in played for name, why in t.failures.items()}
    found = verdicts(rows, config.seed)
    base = next((r for r in reports if r.stage == "base"), None)
    return {
        "model": config.model,
        "trainable_parameters": trainable_parameters(reports),
        "base_parameters": base.extra.get("parameters") if base is not None else None,
        "agent_trained": config.trains_agent,
        "ic": config.ic,
        "seed": config.seed,
        "tickers": tickers,
        "windows": int(rows["episode"].nunique()) if not rows.empty else 0,
        "test_span": [str(rows["start"].min()), str(rows["end"].max())] if not rows.empty else [],
        "policies": {name: found[name].as_dict() for name in policies if name in found},
        "failures": failures,
        "verdict": verdict_lines(config.ic, found),
        "training": training_summary(reports, agent),
        "seconds": round(time.perf_counter() - started, 1),
        "stages": {**stage_clock.done, **stages, "training": moderator_stages(reports)},
        "cpu_seconds": round(StageClock.cpu(), 1),
    }


SUMMARY_KEYS = (
    "kept_step",
    "kept_valid_reward",
    "entropy_last_tenth",
    "top_action_last",
    "objective",
    "teacher",
)


def training_summary(reports: Sequence[Any], agent: Any) -> dict[str, Any]:
    """A few numbers per trained policy (the per-step curves stay in each model's folder:
    ``steps.jsonl`` beside the moderator's adapters, the agent's ``agent.json``)."""
    summary: dict[str, Any] = {}
    for report in reports:
        if report.stage == "base":
            continue
        summary[report.name] = {
            "seconds": round(report.wall_seconds, 1),
            "steps": report.steps,
            "path": str(report.path),
            **{k: report.extra[k] for k in SUMMARY_KEYS if k in report.extra},
        }
    if agent is not None:
        last = agent.curves[-1] if agent.curves else {}
        summary["agent_rl"] = {
            "seconds": round(agent.wall_seconds, 1),
            "steps": len(agent.rl_log),
            "path": agent.run_dir,
            "kept_step": agent.kept_step,
            "valid_result_first": agent.curves[0]["result"] if agent.curves else None,
            "valid_result_last": last.get("result"),
        }
    return summary


def _test_keys(warehouse: Any, splits: Any) -> list[str]:
    """Keys of the stored episodes wholly inside a test split, non-overlapping per ticker."""
    from stocker_core.moderator.learning_check import non_overlapping

    episodes = warehouse.query(
        'SELECT key AS episode_key, ticker, start_date AS start, end_date AS "end" FROM env.episodes'
    )
    inside = [
        row.episode_key
        for row in episodes.itertuples(index=False)
        if splits.episode_split(row.ticker, [row.start, row.end]) == "test"
    ]
    return non_overlapping(episodes[episodes["episode_key"].isin(inside)])


@commands.command("check-learning")
def check_learning_command(
    ic: float = typer.Option(
        0.3,
        "--ic",
        min=-1.0,
        max=1.0,
        help="information coefficient of the planted signal (0: none; at the default 0.3 the "
        "oracle's edge is visible on the test windows, t ~ 4)",
    ),
    seed: int = typer.Option(7, "--seed", min=0, max=MAX_SEED, help="seed of the synthetic market"),
    tickers: int = typer.Option(8, "--tickers", min=2, max=200, help="synthetic tickers"),
    years: float = typer.Option(3.0, "--years", min=1.0, max=40.0, help="years of sessions"),
    home: Path | None = typer.Option(None, "--home", help="keep the warehouse here (default: a temp dir)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    quick: bool = typer.Option(False, "--quick", help="token training budgets (checks the plumbing only)"),
    model: str = typer.Option(
        "tiny",
        "--model",
        help="the moderator's base model: tiny, smollm2, a Hugging Face id or a model folder "
        "(pretrained models read the compact prompt through a head over its values, with LoRA "
        "below; the agent trains in the tiny model's check only)",
    ),
    budget: str = typer.Option(
        "full",
        "--budget",
        help="full, or smoke: a few states and steps per stage (checks that a model runs through "
        "every stage in minutes; its verdict means nothing)",
    ),
) -> None:
    """Does the training loop learn? Train on a synthetic market with a planted signal of
    strength --ic and judge every policy against buy-and-hold on its held-out windows.

    Prints, per policy, the mean excess return over buy-and-hold per window, its 95% CI,
    the p-value on non-overlapping windows and the share of the oracle's excess captured.
    """
    from stocker_core.moderator.learning_check import LearningCheckConfig, format_table

    if not -1.0 <= ic <= 1.0:
        fail(f"--ic {ic} is outside [-1, 1]")
    if home is not None and home.exists() and not home.is_dir():
        fail(f"--home {home} is a file, not a folder: give a new folder (the check builds its warehouse)")
    if home is not None and home.exists() and any(home.iterdir()):
        fail(f"--home {home} is not empty: give a new folder (the check builds its own warehouse)")
    if budget not in ("full", "smoke"):
        fail(f"--budget {budget!r}: use full or smoke")
    if not model.strip():
        fail("--model is empty: give tiny, smollm2, a Hugging Face id or a model folder")
    config = LearningCheckConfig(ic=ic, seed=seed, tickers=tickers, years=years, model=model.strip())
    config = config.quick() if quick else config
    config = config.smoke() if budget == "smoke" else config
    say = (lambda m: typer.echo(m, err=True)) if as_json else typer.echo
    try:
        result = run_learning_check(config, home, say)
    except StockerError as exc:
        fail(exc, EXIT_FAILED)
    typer.echo(json.dumps(result, indent=2, default=str) if as_json else format_table(result))
