"""A tiny warehouse for the web tests: one synthetic ticker's bars, a stored episode, seven
cached votes per day, a chart, backtests, rolling rows, training runs, lineage and a report."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluation"))

from evaluation_testing import store_prices, synthetic_prices  # noqa: E402

from stocker_core.config import Settings  # noqa: E402
from stocker_core.council.backends import RuleBackend  # noqa: E402
from stocker_core.council.cache import VoteCache  # noqa: E402
from stocker_core.council.models import SpecialistVote  # noqa: E402
from stocker_core.council.roles import ROLE_NAMES  # noqa: E402
from stocker_core.env.catalog import episode_row, solve_episode  # noqa: E402
from stocker_core.env.episode import load_episode  # noqa: E402
from stocker_core.evaluation.steps import backtest_partitions  # noqa: E402
from stocker_core.evaluation.store import replace_rows  # noqa: E402
from stocker_core.warehouse.db import Warehouse  # noqa: E402

KEY = "SYN|2015-03-01"
AGENT_RUN = "agent_rl-20240103T093005-abc123"
POLICIES = ["buy_and_hold", "hold", "ideal"]
# a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db40000000049454e44ae426082"
)


@dataclass
class TinyHome:
    settings: Settings
    warehouse: Warehouse
    days: list[str]
    closes: list[float]


def _votes(warehouse: Warehouse, days: list[pd.Timestamp]) -> None:
    """Day 1: every role buys at full confidence; every later day: no confidence (the moderator holds)."""
    backend = RuleBackend()
    rows = []
    for i, day in enumerate(days):
        for role in ROLE_NAMES:
            vote = (
                SpecialistVote(role=role, signal=1.0, confidence=1.0, rationale=f"{role} sees a breakout")
                if i == 0
                else SpecialistVote(role=role, signal=0.0, confidence=0.0, rationale="no view")
            )
            rows.append((day, vote, backend.prompt_version(role)))
    VoteCache(warehouse).store("SYN", backend.name, backend.model_id, rows)


def _chart(settings: Settings, warehouse: Warehouse, day: str) -> None:
    path = settings.charts_dir / "SYN" / f"{day}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(PNG)
    row = {"date": day, "path": str(path), "sha256": "x", "width": 1, "height": 1}
    row |= {"window_start": day, "window_end": day, "input_hash": "h"}
    warehouse.replace_partitions("market.charts", "SYN", pd.DataFrame([row]))


def _rolling(warehouse: Warehouse) -> None:
    summary = pd.DataFrame(
        [
            {
                "policy": "buy_and_hold",
                "label": "buy_and_hold",
                "upper_bound": False,
                "metric": m,
                "mean": mean,
                "ci_low": lo,
                "ci_high": hi,
                "n": 10,
                "confidence": 0.95,
                "block": 3,
            }
            for m, mean, lo, hi in [
                ("total_return", 0.05, 0.01, 0.09),
                ("sharpe", 0.1, 0.02, 0.2),
                ("mdd", 0.04, 0.03, 0.05),
                ("timing_share", 0.2, 0.1, 0.3),
            ]
        ]
        + [
            {
                "policy": "random",
                "label": "random",
                "upper_bound": False,
                "metric": "total_return",
                "mean": 0.01,
                "ci_low": -0.02,
                "ci_high": 0.03,
                "n": 10,
                "confidence": 0.95,
                "block": 3,
            }
        ]
    )
    comparisons = pd.DataFrame(
        [
            {
                "policy": "buy_and_hold",
                "baseline": "random",
                "metric": "total_return",
                "wins": 9,
                "losses": 1,
                "ties": 0,
                "n": 10,
                "p_value": 0.021484375,
            }
        ]
    )
    replace_rows(warehouse, "eval.rolling_summary", summary, "TRUE", [])
    replace_rows(warehouse, "eval.rolling_comparisons", comparisons, "TRUE", [])


def _training(settings: Settings, warehouse: Warehouse) -> None:
    folder = settings.home / "models" / "moderator_sft"
    folder.mkdir(parents=True)
    (folder / "training.json").write_text(
        json.dumps(
            {
                "curve_name": "loss",
                "curve": [[0, 1.5], [10, 0.75], [20, 0.5]],
                "heldout": [{"policy": "moderator_sft", "mean_reward": 1.25}],
            }
        )
    )
    (folder / "curve.png").write_bytes(PNG)
    drl = settings.home / "models" / "drl" / "ppo"
    drl.mkdir(parents=True)
    (drl / "abc.zip").write_bytes(b"zip")
    (drl / "abc.json").write_text(json.dumps({"reward_curve": [[100, -0.5], [200, 0.25]]}))
    rows = [
        ("run1:moderator_sft", "moderator_sft", "sft", "tiny", str(folder), datetime(2024, 1, 2)),
        ("ppo-abc", "ppo", "drl", None, str(drl / "abc.zip"), datetime(2024, 1, 1)),
    ]
    with warehouse.connect() as con:
        for run_id, name, kind, base, path, when in rows:
            con.execute(
                "INSERT INTO models.runs VALUES (?, ?, ?, ?, ?, 0, ?, 'rule:v', ?, 'sha', 12.5, ?, ?)",
                [
                    run_id,
                    name,
                    kind,
                    base,
                    json.dumps({"lr": 0.001}),
                    json.dumps([KEY]),
                    path,
                    json.dumps({"steps": 20}),
                    when,
                ],
            )
    warehouse.record_lineage(
        [
            {
                "asset": "moderator_sft",
                "partition": None,
                "run_id": "run1",
                "code_version": "1",
                "data_version": "d1",
                "upstream": {f"specialist_votes@{KEY}": "v123"},
                "row_count": 40,
            },
            {
                "asset": "prices",
                "partition": KEY,
                "run_id": "r0",
                "code_version": "1",
                "data_version": "p1",
                "upstream": {},
                "row_count": 21,
            },
            {
                "asset": "charts",
                "partition": KEY,
                "run_id": "r0",
                "code_version": "1",
                "data_version": "c1",
                "upstream": {},
                "row_count": 21,
            },
        ]
    )


def build_tiny_home(home: Path) -> TinyHome:
    """Everything the web views read, for one synthetic ticker (SYN, business days from 2015)."""
    settings = Settings(home=home)
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices(days=400))
    episode = load_episode(KEY, settings, warehouse)
    row = episode_row(solve_episode(episode, settings.transaction_cost))
    warehouse.replace_partitions("env.episodes", "SYN", pd.DataFrame([row]).drop(columns="ticker"))
    _votes(warehouse, list(episode.dates))
    days = [d.date().isoformat() for d in episode.dates]
    _chart(settings, warehouse, days[0])
    backtest_partitions(settings, warehouse, [KEY], POLICIES)
    _rolling(warehouse)
    _training(settings, warehouse)
    report = settings.home / "reports" / "evaluation" / "report.html"
    report.parent.mkdir(parents=True)
    report.write_text("<!doctype html><title>report</title><p>evaluation report</p>")
    return TinyHome(settings, warehouse, days, [float(c) for c in episode.closes])


def copy_tiny_home(template: TinyHome, home: Path) -> TinyHome:
    """What ``build_tiny_home(home)`` gives, as a copy of ``template`` (a home it built): ~0.02 s
    instead of ~1 s. The home is relocatable (tests/web/test_home_relocation.py); the two
    ``models.runs`` paths that ``_training`` stores absolute are pointed into the copy, as a
    build there writes them."""
    shutil.copytree(template.settings.home, home, symlinks=True)
    settings = Settings(home=home)
    # a bare connection: the warehouse's own would rewrite the paths relative on this write
    con = duckdb.connect(str(settings.warehouse_path))
    try:
        con.execute(
            "UPDATE models.runs SET path = ? || substr(path, ?) WHERE starts_with(path, ?)",
            [f"{home}/", len(f"{template.settings.home}/") + 1, f"{template.settings.home}/"],
        )
    finally:
        con.close()
    return TinyHome(settings, Warehouse(settings.warehouse_path), list(template.days), list(template.closes))


def _point(step: int, result: float) -> dict[str, float]:
    """One valid check of the agent, as ``AgentTrainingResult.curves`` holds it (sorted keys,
    as the file is written)."""
    point = {"step": step, "n": 60, "result": result, "format": 1.0, "tool": 0.5, "total": result + 1.5}
    point |= {"answered": 1.0, "share_buy": 0.3, "share_hold": 0.4, "share_sell": 0.3}
    return dict(sorted(point.items()))


def add_agent_run(tiny: TinyHome) -> None:
    """An agent run: four valid checks (result moves, answered/format/n/tool/shares do not),
    the kept step 2, two RL log steps; stored at 09:30:05 (the other runs at midnight)."""
    folder = tiny.settings.home / "models" / "agent_rl" / AGENT_RUN
    folder.mkdir(parents=True)
    manifest = {
        "curves": [_point(s, r) for s, r in [(0, -0.02), (1, 0.01), (2, 0.04), (3, 0.03)]],
        "kept_step": 2,
        "warm_start_losses": [[0, 2.0], [1, 1.2]],
        "rl_log": [{"step": 1, "reward": 0.1, "loss": 0.5}, {"step": 2, "reward": 0.2, "loss": 0.4}],
    }
    (folder / "agent.json").write_text(json.dumps(manifest, sort_keys=True))
    with tiny.warehouse.connect() as con:
        con.execute(
            "INSERT INTO models.runs VALUES (?, 'agent_rl', 'agent_rl', 'tiny', '{}', 0, ?, 'rule:v', ?, "
            "'sha', 3.5, '{}', ?)",
            [AGENT_RUN, json.dumps({"tickers": ["SYN"]}), str(folder), datetime(2024, 1, 3, 9, 30, 5)],
        )
