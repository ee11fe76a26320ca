"""Where the trained agent lives: ``$STOCKER_HOME/models/agent_rl/``.

Each training writes ``<run>/base`` (the warm-started model, ``save_base``),
``<run>/adapter`` (the RL LoRA adapter), ``<run>/agent.json`` (what produced it, the
validation curves) and ``<run>/curves.png``, then points ``current.json`` at it; older
runs stay so every ``models.runs`` row keeps a valid path. The manifests record the run's
folder relative to ``STOCKER_HOME`` (``warehouse.home_paths``), so the home can move;
``current_run`` hands it back as a path in the home in use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stocker_core.agent.errors import AgentNotTrainedError
from stocker_core.atomic_files import write_json_atomic
from stocker_core.warehouse.home_paths import relocate_files, resolve_path, stored_path

CURRENT = "current.json"
MANIFEST = "agent.json"
HINT = "no trained agent: materialize agent_policy first (stocker materialize --groups training)"


def agent_model_dir(home: Path | str) -> Path:
    """``$STOCKER_HOME/models/agent_rl``."""
    return Path(home) / "models" / "agent_rl"


def publish_run(run_dir: Path, manifest: dict[str, Any], home: Path | str | None = None) -> None:
    """Write the run's manifest and make it the current agent; the paths into ``home``
    (default: the home ``run_dir`` lies in, ``agent_model_dir(home)/<run>``) are stored
    relative to it, the adapter's base model folder included."""
    home = Path(home) if home is not None else Path(run_dir).parents[2]
    relative = stored_path(run_dir, home)
    write_json_atomic(run_dir / MANIFEST, {**manifest, "run_dir": relative})
    write_json_atomic(run_dir.parent / CURRENT, {**manifest, "run_dir": relative})
    relocate_files(run_dir, home)


def current_run(home: Path | str) -> dict[str, Any]:
    """The current run's manifest with ``run_dir`` its folder in ``home`` (the manifest stores
    it relative to the home; an older absolute one is re-anchored in it); AgentNotTrainedError
    when none."""
    pointer = agent_model_dir(home) / CURRENT
    if not pointer.is_file():
        raise AgentNotTrainedError(f"{HINT}; looked in {pointer.parent}")
    try:
        manifest = json.loads(pointer.read_text())
    except ValueError as exc:
        raise AgentNotTrainedError(f"{HINT}; {pointer} is unreadable ({exc})") from None
    run_dir = resolve_path(manifest.get("run_dir"), home) or Path(home)
    if not (run_dir / "adapter" / "adapter_config.json").is_file() or not (run_dir / "base").is_dir():
        raise AgentNotTrainedError(f"{HINT}; the files of {run_dir} are missing")
    return {**manifest, "run_dir": str(run_dir)}


def model_run_row(result: Any, run_id: str) -> dict[str, Any]:
    """One ``models.runs`` row for a trained agent (an ``AgentTrainingResult``)."""
    from datetime import datetime

    final = result.curves[-1] if result.curves else {}
    return {
        "run_id": run_id,
        "model_name": "agent_rl",
        "kind": "agent_rl",
        "base_model": result.base_model,
        "config": json.dumps(result.config, sort_keys=True),
        "seed": int(result.config.get("seed", 0)),
        "episode_keys": json.dumps(
            {"tickers": result.tickers, "train_span": result.train_span, "valid_span": result.valid_span}
        ),
        "vote_cache_version": None,
        "path": result.run_dir,
        "sha256": result.sha256,
        "wall_seconds": result.wall_seconds,
        "metrics": json.dumps({"valid_final": final, "train_pairs": result.train_pairs}, default=str),
        "created_at": datetime.fromisoformat(result.created_at) if result.created_at else datetime.now(),
    }
