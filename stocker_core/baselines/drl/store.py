"""Where trained deep-RL agents live: ``$STOCKER_HOME/models/drl/<algo>/``.

Each training writes ``<sha12>.zip`` (the stable-baselines3 model) and ``<sha12>.json``
(what produced it), then points ``current.json`` at them; older models stay on disk so
every ``models.runs`` row keeps a valid path. Both JSON files and ``models.runs`` record the
zip's path relative to ``STOCKER_HOME`` (``warehouse.home_paths``), so the home can move;
``current_result`` hands it back as a path in the home in use.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from stocker_core.atomic_files import write_json_atomic
from stocker_core.errors import InvalidNameError, StockerError
from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.home_paths import resolve_path, store_columns, stored_path

Algo = Literal["a2c", "ppo"]
ALGOS: tuple[Algo, ...] = ("a2c", "ppo")
CURRENT = "current.json"


class MissingModelError(StockerError, FileNotFoundError):
    """No trained model where the policy looks for one."""


class ModelMismatchError(StockerError, ValueError):
    """A stored model that does not fit the environment it is asked to play."""


def check_algo(algo: str) -> Algo:
    """``algo`` if it is a known deep-RL algorithm, else InvalidNameError listing them."""
    if algo not in ALGOS:
        raise InvalidNameError(f"unknown deep-RL algorithm {algo!r}: use one of {', '.join(ALGOS)}")
    return algo  # type: ignore[return-value]


def drl_model_dir(home: Path | str, algo: str) -> Path:
    """``$STOCKER_HOME/models/drl/<algo>``."""
    return Path(home) / "models" / "drl" / check_algo(algo)


@dataclass(frozen=True)
class DrlTrainingResult:
    """What one training produced and from what (JSON-ready via ``to_dict``)."""

    algo: str
    model_path: str
    sha256: str
    wall_seconds: float
    timesteps: int
    seed: int
    episode_keys: list[str]
    config: dict[str, Any]
    reward_curve: list[tuple[int, float]] = field(default_factory=list)
    """(timesteps so far, mean training-episode reward over the bucket ending there)."""
    created_at: str = ""
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def final_mean_reward(self) -> float | None:
        """Mean training-episode reward of the curve's last bucket (None without episodes)."""
        return self.reward_curve[-1][1] if self.reward_curve else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DrlTrainingResult:
        data = dict(data)
        data["reward_curve"] = [(int(t), float(r)) for t, r in data.get("reward_curve", [])]
        return cls(**data)


def publish_result(result: DrlTrainingResult, home: Path | str) -> None:
    """Write the result beside its model and make it the algorithm's current model (the
    model's path stored relative to ``home``)."""
    model = Path(result.model_path)
    stored = {**result.to_dict(), "model_path": stored_path(model, home)}
    write_json_atomic(model.with_suffix(".json"), stored)
    write_json_atomic(model.parent / CURRENT, stored)


def current_result(home: Path | str, algo: str) -> DrlTrainingResult:
    """The current trained model of ``algo`` under ``home``; MissingModelError when none."""
    folder = drl_model_dir(home, algo)
    pointer = folder / CURRENT
    hint = f"no trained {algo} model: materialize drl_agents first (stocker materialize --groups evaluation)"
    if not pointer.is_file():
        raise MissingModelError(f"{hint}; looked in {folder}")
    try:
        data = json.loads(pointer.read_text())
        data["model_path"] = str(resolve_path(data["model_path"], home) or "")
        result = DrlTrainingResult.from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise MissingModelError(f"{hint}; {pointer} is unreadable ({exc})") from None
    if not Path(result.model_path).is_file():
        raise MissingModelError(f"{hint}; {result.model_path} is missing")
    return result


def model_run_row(result: DrlTrainingResult, run_id: str) -> dict[str, Any]:
    """One ``models.runs`` row for a trained deep-RL agent (``run_id`` unique per model)."""
    return {
        "run_id": run_id,
        "model_name": result.algo,
        "kind": "drl",
        "base_model": None,
        "config": json.dumps(result.config, sort_keys=True),
        "seed": result.seed,
        "episode_keys": json.dumps(result.episode_keys),
        "vote_cache_version": None,
        "path": result.model_path,
        "sha256": result.sha256,
        "wall_seconds": result.wall_seconds,
        "metrics": json.dumps(
            {"timesteps": result.timesteps, "final_mean_episode_reward": result.final_mean_reward}
        ),
        "created_at": datetime.fromisoformat(result.created_at) if result.created_at else datetime.now(),
    }


def record_model_runs(warehouse: Warehouse, rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``models.runs`` rows by column name in one transaction (a rerun of the same
    ``run_id`` replaces its row); ``path`` is stored relative to the warehouse's home."""
    if not rows:
        return
    import pandas as pd

    frame = store_columns("models.runs", pd.DataFrame(list(rows)), warehouse.home)
    with warehouse.transaction() as con:
        con.execute("DELETE FROM models.runs WHERE run_id IN (SELECT unnest(?))", [list(frame["run_id"])])
        con.register("incoming_runs", frame)
        con.execute("INSERT INTO models.runs BY NAME SELECT * FROM incoming_runs")
        con.unregister("incoming_runs")
