"""Training runs as the web page shows them: ``models.runs`` rows, the curves their
trainers saved beside the weights, held-out tables and the lineage of what trained them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stocker_core.warehouse.home_paths import resolve_path, stored_path
from stocker_core.web.errors import NotFoundError
from stocker_core.web.reader import WarehouseReader, parse_json, plain, records, stamp
from stocker_core.web.training_curves import learning_curve, pairs, split_constant

NO_RUNS = "no training runs yet: run `stocker train` or `stocker materialize --groups training`"
LINEAGE_LIMIT = 60
"""Upstream entries listed per lineage row (the count says how many there are in all)."""


def lineage_asset(model_name: str, kind: str) -> str:
    """The Dagster asset whose ``meta.lineage`` rows describe a run of this model."""
    if kind == "drl":
        return "drl_agents"
    if model_name == "agent_rl" or kind == "agent_rl":
        return "agent_policy"
    return model_name


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _dict_series(points: Any, x_key: str) -> dict[str, list[list[float]]]:
    """One series per numeric field of a list of dicts, against ``x_key``."""
    series: dict[str, list[list[float]]] = {}
    for point in points or []:
        if not isinstance(point, dict) or not isinstance(point.get(x_key), int | float):
            continue
        for name, value in point.items():
            if name != x_key and isinstance(value, int | float) and not isinstance(value, bool):
                series.setdefault(name, []).append([point[x_key], value])
    return series


def training_data_summary(keys: object, metrics: object) -> dict[str, object]:
    """What trained a run, as a count with its unit and a line for people: a list of
    episode keys (moderators, deep RL) or the agent's tickers and spans with its pair count."""
    if isinstance(keys, dict):  # the agent: tickers and date spans; its pairs are in metrics
        tickers = [str(t) for t in keys.get("tickers") or []]
        counted = metrics.get("train_pairs") if isinstance(metrics, dict) else None
        span = keys.get("train_span")
        parts = [f"{len(tickers)} ticker{'' if len(tickers) == 1 else 's'} ({', '.join(tickers[:5])})"]
        if isinstance(span, list | tuple) and len(span) == 2:
            parts.append(f"train {span[0]} … {span[1]}")
        if not isinstance(counted, int | float):  # the tickers are the count: not said twice
            unit = "ticker" if len(tickers) == 1 else "tickers"
            return {"count": len(tickers), "unit": unit, "text": " · ".join(parts)}
        count, unit = int(counted), "train pairs"
        return {"count": count, "unit": unit, "text": f"{count:,} {unit} · " + " · ".join(parts)}
    listed = [str(k) for k in keys] if isinstance(keys, list) else []
    unit = "episode" if len(listed) == 1 else "episodes"
    return {"count": len(listed), "unit": unit, "text": f"{len(listed):,} {unit}", "keys": listed[:20]}


def run_folder(path: object, home: Path) -> Path | None:
    """The files of a run in ``home``: ``models.runs.path`` is relative to the home (older rows'
    absolute paths are re-anchored in it: ``home_paths.resolve_path``); None when empty."""
    return resolve_path(path, home)


def run_artifacts(model_name: str, kind: str, path: str | None, home: Path) -> dict[str, Any]:
    """The learning curve (``training_curves.learning_curve``), the other curves that move
    (name -> [[x, y]]), the constant ones (``constant``: name, value), held-out rows and the
    saved plot of one run, from the files its trainer wrote (``training.json``, ``agent.json``,
    ``<model>.json``) under ``home``."""
    where = run_folder(path, home)
    if where is None:
        return {
            "learning": None,
            "curves": {},
            "constant": [],
            "heldout": [],
            "image": None,
            "files": "no path recorded",
        }
    curves: dict[str, list[list[float]]] = {}
    heldout: list[dict[str, Any]] = []
    image: Path | None = None
    if kind == "drl":
        data = _read_json(where.with_suffix(".json"))
        if data.get("reward_curve"):
            curves["mean training-episode reward (x: timesteps)"] = pairs(data["reward_curve"])
    elif model_name == "agent_rl" or kind == "agent_rl":
        data = _read_json(where / "agent.json")
        curves.update({f"held-out {k}": v for k, v in _dict_series(data.get("curves"), "step").items()})
        if data.get("warm_start_losses"):
            curves["warm-start loss"] = pairs(data["warm_start_losses"])
        for name, points in _dict_series(data.get("rl_log"), "step").items():
            if name in ("reward", "loss", "mean_reward", "reward_std"):
                curves[f"RL {name}"] = points
        image = where / "curves.png"
    else:
        data = _read_json(where / "training.json")
        if data.get("curve"):
            curves[f"training {data.get('curve_name') or 'curve'}"] = pairs(data["curve"])
        heldout = data.get("heldout") or []
        image = where / "curve.png"
    found = bool(data)
    learning = learning_curve(model_name, kind, data)
    if learning is not None:  # not shown twice
        curves = {name: points for name, points in curves.items() if points != learning["points"]}
    moving, constant = split_constant(curves)
    return plain(
        {
            "learning": learning,
            "curves": moving,
            "constant": constant,
            "heldout": heldout,
            "image": image is not None and image.is_file(),
            "files": None if found else f"the run's files are not at {path}",
        }
    )


def run_image(reader: WarehouseReader, home: Path, run_id: str) -> Path:
    """The curve PNG a run's trainer saved (inside ``home``); NotFoundError otherwise."""
    row = reader.frame(
        "SELECT model_name, kind, path FROM models.runs WHERE run_id = ?", [run_id], needs=["models.runs"]
    )
    if row.empty:
        raise NotFoundError(f"no training run {run_id!r}")
    r = row.iloc[0]
    name = "curve.png" if str(r["model_name"]).startswith("moderator_") else "curves.png"
    folder = run_folder(r["path"], home)
    image = folder / name if folder is not None else None
    if r["kind"] == "drl" or image is None or not image.is_file() or not _inside(image, home):
        raise NotFoundError(f"training run {run_id!r} has no saved curve plot")
    return image


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def lineage_rows(reader: WarehouseReader, asset: str, limit: int = 3) -> list[dict[str, Any]]:
    """The newest ``meta.lineage`` rows of ``asset`` with their upstream data versions."""
    frame = reader.frame(
        """SELECT asset, partition, run_id, code_version, data_version, upstream_data_versions,
                  row_count, materialized_at FROM meta.lineage WHERE asset = ?
           ORDER BY materialized_at DESC LIMIT ?""",
        [asset, limit],
        needs=["meta.lineage"],
    )
    out = []
    for row in records(frame):
        upstream = parse_json(row.pop("upstream_data_versions")) or {}
        items = sorted(upstream.items()) if isinstance(upstream, dict) else []
        row["upstream_count"] = len(items)
        row["upstream"] = [{"input": k, "version": v} for k, v in items[:LINEAGE_LIMIT]]
        row["materialized_at"] = stamp(row.get("materialized_at"))
        out.append(row)
    return out


def training_overview(reader: WarehouseReader) -> dict[str, Any]:
    """Every ``models.runs`` row (newest first) with its curves, held-out table and lineage
    (the run's files are read in the warehouse's home, wherever it was built)."""
    frame = reader.frame("SELECT * FROM models.runs ORDER BY created_at DESC", needs=["models.runs"])
    if frame.empty:
        return {"empty": NO_RUNS, "runs": []}
    runs = []
    for row in records(frame):
        for column in ("config", "episode_keys", "metrics"):
            row[column] = parse_json(row.get(column))
        row["episodes"] = training_data_summary(row.pop("episode_keys"), row.get("metrics"))
        row["created_at"] = stamp(row.get("created_at"))
        home = reader.path.parent
        row.update(run_artifacts(row["model_name"], row["kind"], row.get("path"), home))
        folder = run_folder(row.get("path"), home)  # shown relative to the home, wherever it was built
        row["path"] = stored_path(folder, home) if folder is not None else None
        row["lineage"] = lineage_rows(reader, lineage_asset(row["model_name"], row["kind"]))
        runs.append(row)
    return {"empty": None, "runs": runs}
