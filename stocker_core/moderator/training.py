"""The training group end to end: base model, SFT warm start, GRPO — each a stage that
saves under ``$STOCKER_HOME/models/moderator_<stage>/``, reports what trained it and a
held-out (valid split) table, and writes one ``models.runs`` row."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council.backends import get_backend
from stocker_core.env.episode import Episode, episode_from_bars, window_bounds
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import EmptyDataError, StockerError
from stocker_core.language_model.checkpoints import trainable_parameters
from stocker_core.language_model.factory import create_base, load_base, load_with_adapter, save_base
from stocker_core.language_model.runtime import (
    Progress,
    library_warnings_silenced,
    quiet_libraries,
    seed_everything,
    weights_sha256,
)
from stocker_core.market.bars import load_bars
from stocker_core.market.validation import parse_partition_key
from stocker_core.moderator.config import STAGES, TrainingConfig
from stocker_core.moderator.dataset import (
    EpisodeContext,
    build_rows,
    episode_context,
    episode_rows,
    target_path,
)
from stocker_core.moderator.heldout import (
    REFERENCE_POLICIES,
    episode_records,
    play_moderator,
    play_reference,
    summarize,
)
from stocker_core.moderator.selection import EpisodeSplits, select_episodes
from stocker_core.moderator.votes import EpisodeVotes, episode_votes
from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.home_paths import relocate_files, resolve_path, stored_path

REPORT_FILE = "training.json"
STEPS_FILE = "steps.jsonl"
"""Every update of a stage (reward, loss, entropy, the nine answers' shares), one JSON a line."""
CURVE_FILE = "curve.png"


def model_name(stage: str) -> str:
    """``moderator_base`` / ``moderator_sft`` / ``moderator_grpo``."""
    return f"moderator_{stage}"


def model_dir(settings: Settings, stage: str) -> Path:
    """Where a stage's model or adapter lives: ``$STOCKER_HOME/models/moderator_<stage>``."""
    return settings.home / "models" / model_name(stage)


@dataclass
class TrainingData:
    """The splits, the training rows and environments, and the held-out environments."""

    splits: EpisodeSplits
    rows: list[dict[str, Any]]
    train_contexts: dict[str, EpisodeContext]
    valid_contexts: list[EpisodeContext]
    votes: EpisodeVotes
    _valid_rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    def valid_states(
        self, state_path: str = "council"
    ) -> tuple[list[dict[str, Any]], dict[str, EpisodeContext]]:
        """The valid episodes' states (rows along ``state_path``) and their contexts: what a
        stage's checkpoint is chosen on. Never trained on."""
        if self._valid_rows is None:
            self._valid_rows = [r for c in self.valid_contexts for r in episode_rows(c, state_path)]
        return self._valid_rows, {c.env.episode.key: c for c in self.valid_contexts}


@dataclass
class StageReport:
    """What a stage produced and what produced it (metadata, lineage, ``models.runs``)."""

    stage: str
    path: Path
    base_model: str
    config: dict[str, Any]
    seed: int
    episode_keys: list[str]
    vote_cache_version: str
    votes_data_version: str
    wall_seconds: float
    sha256: str
    steps: int = 0
    curve_name: str = ""
    curve: list[tuple[int, float]] = field(default_factory=list)
    heldout: pd.DataFrame = field(default_factory=pd.DataFrame)
    heldout_episodes: list[dict[str, Any]] = field(default_factory=list)
    """One record per (policy, valid episode): ``episode_records``' fields."""
    extra: dict[str, Any] = field(default_factory=dict)
    steps_log: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """Per-update records, written to ``STEPS_FILE`` beside the model (not into the report)."""

    @property
    def name(self) -> str:
        return model_name(self.stage)

    def to_json(self, home: Path | None = None) -> dict[str, Any]:
        """The report as JSON-ready values; ``path`` relative to ``home`` when given (what
        ``training.json`` stores, so the home can move)."""
        return {
            "stage": self.stage,
            "name": self.name,
            "path": stored_path(self.path, home) if home is not None else str(self.path),
            "base_model": self.base_model,
            "config": self.config,
            "seed": self.seed,
            "episode_keys": self.episode_keys,
            "vote_cache_version": self.vote_cache_version,
            "votes_data_version": self.votes_data_version,
            "wall_seconds": self.wall_seconds,
            "sha256": self.sha256,
            "steps": self.steps,
            "curve_name": self.curve_name,
            "curve": self.curve,
            "heldout": self.heldout.to_dict(orient="records"),
            "heldout_episodes": self.heldout_episodes,
            "extra": self.extra,
        }


def stored_episode_keys(warehouse: Warehouse) -> list[str]:
    """Keys of the episodes stored by the ``episodes`` asset (``env.episodes``)."""
    if not warehouse.path.exists():
        return []
    exists = warehouse.query(
        "SELECT count(*) AS n FROM information_schema.tables "
        "WHERE table_schema = 'env' AND table_name = 'episodes'"
    )
    if not int(exists["n"].iloc[0]):
        return []
    return list(warehouse.query("SELECT key FROM env.episodes ORDER BY key")["key"])


def load_episodes(keys: Sequence[str], settings: Settings, warehouse: Warehouse) -> list[Episode]:
    """The episodes of ``keys``, reading each ticker's bars once."""
    by_ticker: dict[str, list[str]] = {}
    for key in keys:
        by_ticker.setdefault(parse_partition_key(key)[0], []).append(key)
    episodes: dict[str, Episode] = {}
    for ticker, ticker_keys in by_ticker.items():
        last = max(parse_partition_key(k)[1] for k in ticker_keys)
        bars, origin = load_bars(
            settings, ticker, None, window_bounds(last, settings.episode_months)[1], warehouse
        )
        for key in ticker_keys:
            episodes[key] = episode_from_bars(key, bars, settings, origin)
    return [episodes[k] for k in keys]


def prepare_data(config: TrainingConfig, settings: Settings, warehouse: Warehouse) -> TrainingData:
    """Splits, votes (cache first), training rows along the configured trajectory, and the
    held-out environments (valid split, capped by ``eval_max_episodes``)."""
    available = stored_episode_keys(warehouse)

    def days_of(keys: Sequence[str]) -> dict[str, Sequence[Any]]:
        return {ep.key: list(ep.dates) for ep in load_episodes(keys, settings, warehouse)}

    splits = select_episodes(
        settings, config.train_episodes, config.valid_episodes, available, warehouse, days_of
    )
    if not splits.train:
        raise EmptyDataError(
            "no train-split episodes: materialize the env group (episodes) first, or list "
            "train_episodes in the training config"
        )
    valid_keys = splits.valid[: config.eval_max_episodes or None]
    train_eps = load_episodes(splits.train, settings, warehouse)
    valid_eps = load_episodes(valid_keys, settings, warehouse)
    for episode in train_eps:
        splits.guard.check(episode)
    backend = get_backend(settings, config.vote_backend)
    votes = episode_votes([*train_eps, *valid_eps], settings, warehouse, backend)
    params = RewardParams.from_settings(settings)
    rows, contexts = build_rows(
        train_eps, votes, params, splits.guard, config.state_path, config.sft_target_cost
    )
    valid = [episode_context(ep, votes, params) for ep in valid_eps]
    return TrainingData(splits, rows, contexts, valid, votes)


_DATA_FIELDS = (
    "train_episodes",
    "valid_episodes",
    "state_path",
    "vote_backend",
    "sft_target_cost",
    "eval_max_episodes",
)
_PREPARED: dict[str, TrainingData] = {}
_HELDOUT: dict[tuple, list[dict[str, Any]]] = {}
"""Held-out records already played in this process: the SFT and GRPO stages of one job replay
the earlier stages' models and the reference policies on the same episodes, so each model
(by its weights) and each reference is played once."""


def _upstream_fingerprint(warehouse: Warehouse) -> str:
    """When the data a training run reads was last rebuilt (prices, episodes, votes, splits)."""
    try:
        rows = warehouse.query(
            "SELECT asset, count(*) AS n, max(materialized_at) AS at FROM meta.lineage "
            "WHERE asset IN ('prices', 'episodes', 'specialist_votes', 'splits') "
            "GROUP BY asset ORDER BY asset"
        )
    except Exception:  # no lineage table yet: nothing to reuse safely
        return uuid.uuid4().hex
    return rows.astype(str).to_json()


def prepared_data(config: TrainingConfig, settings: Settings, warehouse: Warehouse) -> TrainingData:
    """``prepare_data``, reused by the next stage of the same process (base → SFT → GRPO of one
    job) while the config's data fields, the settings and the upstream lineage are unchanged."""
    key = json.dumps(
        [
            {f: config.public()[f] for f in _DATA_FIELDS},
            settings.model_dump_json(),
            str(warehouse.path),
            _upstream_fingerprint(warehouse),
        ],
        default=str,
    )
    if key not in _PREPARED:
        _PREPARED.clear()
        _PREPARED[key] = prepare_data(config, settings, warehouse)
    return _PREPARED[key]


def heldout_episodes(
    settings: Settings, data: TrainingData, stages: Sequence[str], config: TrainingConfig
) -> list[dict[str, Any]]:
    """Every held-out episode played by the trained ``stages`` and the reference policies
    (rule council, buy-and-hold, random), scored by ``evaluation.backtests``: one record each."""
    if not data.valid_contexts:
        return []
    episodes = (data.votes.cache_version, *(c.env.episode.key for c in data.valid_contexts))
    records: list[dict[str, Any]] = []
    for stage in stages:
        weights = tuple(weights_sha256(model_dir(settings, s)) for s in dict.fromkeys(("base", stage)))
        key = ("moderator", stage, weights, config.decode, episodes)
        if key not in _HELDOUT:
            loaded = load_moderator(settings, stage, merged=True)
            played = play_moderator(loaded, data.valid_contexts, model_name(stage), config.decode)
            _HELDOUT[key] = episode_records([run for run, _ in played], [n for _, n in played])
        records += [dict(r) for r in _HELDOUT[key]]
    for name in REFERENCE_POLICIES:
        key = ("reference", name, config.seed, episodes)
        if key not in _HELDOUT:
            _HELDOUT[key] = episode_records(play_reference(name, data.valid_contexts, config.seed))
        records += [dict(r) for r in _HELDOUT[key]]
    return records


def heldout_table(
    settings: Settings, data: TrainingData, stages: Sequence[str], config: TrainingConfig
) -> pd.DataFrame:
    """Mean episode reward, final value and return on the held-out episodes per policy."""
    return summarize(heldout_episodes(settings, data, stages, config))


def load_moderator(settings: Settings, stage: str, trainable: bool = False, merged: bool = False):
    """The saved base (``stage="base"``) or base plus the stage's adapter; ``merged`` folds
    the adapter into the weights (inference only: the same answers, ~20% faster on CPU)."""
    base_dir = model_dir(settings, "base")
    if stage == "base":
        return load_base(base_dir)
    loaded = load_with_adapter(base_dir, model_dir(settings, stage), trainable=trainable and not merged)
    if merged:
        loaded.model = loaded.model.merge_and_unload()
    return loaded


def _report(
    stage: str,
    config: TrainingConfig,
    data: TrainingData | None,
    path: Path,
    started: float,
    base_model: str,
) -> StageReport:
    return StageReport(
        stage=stage,
        path=path,
        base_model=base_model,
        config=config.public(),
        seed=config.seed,
        episode_keys=list(data.splits.train) if data else [],
        vote_cache_version=data.votes.cache_version if data else "",
        votes_data_version=data.votes.data_version if data else "",
        wall_seconds=time.perf_counter() - started,
        sha256=weights_sha256(path),
    )


def run_base(config: TrainingConfig, settings: Settings) -> StageReport:
    """Build (tiny) or load (smollm2 / id / path) the base model and save it with its tokenizer."""
    quiet_libraries()
    seed_everything(config.seed, config.threads)
    started = time.perf_counter()
    loaded = create_base(config.model_spec())
    if loaded.prompt_style != "words" and config.prompt == "compact":
        loaded.prompt_style = "compact"  # saved in the manifest: every later stage reads it
    path = save_base(loaded, model_dir(settings, "base"))
    report = _report("base", config, None, path, started, loaded.name)
    params = sum(p.numel() for p in loaded.model.parameters())
    report.extra = {"parameters": int(params), "prompt_style": loaded.prompt_style, "device": loaded.device}
    return report


def run_sft_stage(
    config: TrainingConfig, settings: Settings, data: TrainingData, progress: Progress | None = None
) -> StageReport:
    """SFT warm start from the saved base (``config.sft_teacher``: the reward teacher, or the
    ideal completions; a fields head's closed-form fit whatever the teacher); adapter saved."""
    from stocker_core.moderator.head_fit import run_head_fit
    from stocker_core.moderator.sft import run_reward_sft, run_sft

    started = time.perf_counter()
    base = load_base(model_dir(settings, "base"))
    with library_warnings_silenced():
        if config.readout == "fields_head" or config.sft_teacher == "reward":
            fit = run_head_fit if config.readout == "fields_head" else run_reward_sft
            result = fit(
                base,
                data.rows,
                data.train_contexts,
                config,
                model_dir(settings, "sft"),
                data.valid_states(config.state_path),
                progress,
            )
        else:
            result = run_sft(base, data.rows, config, model_dir(settings, "sft"), progress)
    report = _report("sft", config, data, result.adapter_dir, started, base.name)
    curve = "reward" if config.sft_teacher == "reward" or config.readout == "fields_head" else "loss"
    report.steps, report.curve_name, report.curve = result.steps, curve, result.log.series(curve)
    report.steps_log = result.log.records() if hasattr(result.log, "records") else []
    report.extra = {
        "rows": len(data.rows),
        "train_seconds": result.wall_seconds,
        "teacher": "fields_head" if config.readout == "fields_head" else config.sft_teacher,
        "trainable_parameters": trainable_parameters(base.model),
        **result.details,
        "train_days": sum(len(c.env.closes) for c in data.train_contexts.values()),
        **fit_summary(result.fit),
    }
    if config.sft_teacher == "ideal":
        report.extra |= {"teacher_cost": config.sft_target_cost, "teacher_flips": teacher_flips(data, config)}
    return report


def fit_summary(fit: Any) -> dict[str, Any]:
    """The valid curve of a reward-table fit and the step whose checkpoint was kept."""
    if fit is None:
        return {}
    return {
        "valid_curve": [[step, score] for step, score in fit.valid_curve],
        "kept_step": fit.best_step,
        "kept_valid_reward": fit.best_valid,
    }


def teacher_flips(data: TrainingData, config: TrainingConfig) -> int:
    """How often the SFT teacher's path changes between long and flat over the train episodes."""
    import numpy as np

    flips = 0
    for context in data.train_contexts.values():
        long = np.asarray(target_path(context.env, config.sft_target_cost), dtype=int)
        flips += int(np.abs(np.diff(long)).sum()) + int(long[0])
    return flips


def run_grpo_stage(
    config: TrainingConfig, settings: Settings, data: TrainingData, progress: Progress | None = None
) -> StageReport:
    """The RL stage continuing the SFT fit (its last weights when SFT kept them apart from its
    published best valid check, else its adapter); adapter saved."""
    from stocker_core.moderator.reward_regression import continue_dir, run_reward_regression

    started = time.perf_counter()
    resume = continue_dir(model_dir(settings, "sft"))
    if (resume / "adapter_config.json").is_file():  # SFT's last weights, where its fit ended
        policy = load_with_adapter(model_dir(settings, "base"), resume, trainable=True)
    else:
        policy = load_moderator(settings, "sft", trainable=True)
    with library_warnings_silenced():
        result, table = run_reward_regression(
            policy,
            data.rows,
            data.train_contexts,
            config,
            model_dir(settings, "grpo"),
            progress,
            valid=data.valid_states(config.state_path),
        )
    log = result.log
    report = _report("grpo", config, data, result.adapter_dir, started, policy.name)
    report.steps, report.curve_name, report.curve = result.steps, "reward", log.series("reward")
    report.steps_log = log.records()
    last = log.steps[-1].actions if log.steps else {}
    report.extra = {
        "rows": len(table.rows),
        "rows_without_next_session": table.dropped,
        "train_seconds": result.wall_seconds,
        "reward": config.reward,
        "objective": config.objective,
        "trainable_parameters": trainable_parameters(policy.model),
        "rows_zero_spread": table.zero_spread,
        "frac_reward_zero_std": [round(v, 4) for _, v in log.series("frac_reward_zero_std")],
        "frac_reward_zero_std_last_tenth": log.last_tenth("frac_reward_zero_std"),
        "entropy_last_tenth": log.last_tenth("entropy"),
        "action_distribution_last": last,
        **fit_summary(result.fit),
        "top_action_last": max(last, key=last.get) if last else "",
    }
    return report


STAGE_RUNNERS = {"sft": run_sft_stage, "grpo": run_grpo_stage}


def finish_stage(
    report: StageReport,
    settings: Settings,
    data: TrainingData | None,
    config: TrainingConfig,
    run_id: str | None = None,
) -> StageReport:
    """Held-out table (when there is data), curve plot and report file beside the model,
    one ``models.runs`` row."""
    from stocker_core.moderator.plots import curve_png

    if data is not None:
        done = [s for s in STAGES if STAGES.index(s) <= STAGES.index(report.stage)]
        report.heldout_episodes = heldout_episodes(settings, data, done, config)
        report.heldout = summarize(report.heldout_episodes)
    if report.steps_log:
        lines = (json.dumps(step, default=str) for step in report.steps_log)
        (report.path / STEPS_FILE).write_text("\n".join(lines) + "\n")
    png = curve_png(report.curve, f"{report.name}: {report.curve_name or 'no training'}", report.curve_name)
    (report.path / CURVE_FILE).write_bytes(png)
    (report.path / REPORT_FILE).write_text(json.dumps(report.to_json(settings.home), indent=2, default=str))
    relocate_files(report.path, settings.home)  # the adapter's base model folder, home-relative
    record_run(Warehouse(settings.warehouse_path), report, run_id)
    return report


def record_run(warehouse: Warehouse, report: StageReport, run_id: str | None = None) -> str:
    """One ``models.runs`` row for the stage; returns the run id used."""
    run_id = f"{run_id or uuid.uuid4().hex}:{report.name}"
    metrics = {
        "steps": report.steps,
        "curve_last": report.curve[-1][1] if report.curve else None,
        "heldout": report.heldout.to_dict(orient="records"),
        **{k: v for k, v in report.extra.items() if isinstance(v, int | float | str)},
    }
    with warehouse.transaction() as con:
        con.execute("DELETE FROM models.runs WHERE run_id = ?", [run_id])
        con.execute(
            "INSERT INTO models.runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                report.name,
                report.stage,
                report.base_model,
                json.dumps(report.config),
                report.seed,
                json.dumps(report.episode_keys),
                report.vote_cache_version,
                stored_path(report.path, warehouse.home),
                report.sha256,
                report.wall_seconds,
                json.dumps(metrics, default=str),
                datetime.now(),
            ],
        )
    return run_id


def read_report(settings: Settings, stage: str) -> dict[str, Any]:
    """The ``training.json`` a stage left beside its model."""
    path = model_dir(settings, stage) / REPORT_FILE
    if not path.is_file():
        raise StockerError(f"{model_name(stage)} has not been trained: materialize the training group first")
    report = json.loads(path.read_text())
    if report.get("path"):  # stored relative to the home (older reports: absolute, re-anchored)
        report["path"] = str(resolve_path(report["path"], settings.home))
    return report


def train(
    config: TrainingConfig,
    settings: Settings,
    stages: Sequence[str] = STAGES,
    progress: Progress | None = None,
    run_id: str | None = None,
) -> list[StageReport]:
    """Run ``stages`` in order (``base``, ``sft``, ``grpo``) and return their reports."""
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise StockerError(f"unknown training stage(s) {', '.join(unknown)}: use {', '.join(STAGES)}")
    warehouse = Warehouse(settings.warehouse_path)
    run_id = run_id or uuid.uuid4().hex
    data = prepare_data(config, settings, warehouse)
    reports = []
    announce = progress or (lambda stage, done, total: None)
    for stage in [s for s in STAGES if s in stages]:
        announce(f"{stage}: {'loading the base model' if stage == 'base' else 'preparing'}", 0, 0)
        wall, cpu = time.perf_counter(), cpu_seconds()
        report = (
            run_base(config, settings)
            if stage == "base"
            else STAGE_RUNNERS[stage](config, settings, data, progress)
        )
        announce(f"{stage}: playing the held-out episodes", 0, 0)
        trained = time.perf_counter() - wall, cpu_seconds() - cpu
        reports.append(finish_stage(report, settings, data, config, run_id))
        # in memory only (training.json is written): training and held-out plays apart
        report.extra["cost"] = {
            "train_wall_seconds": round(trained[0], 1),
            "train_cpu_seconds": round(trained[1], 1),
            "heldout_wall_seconds": round(time.perf_counter() - wall - trained[0], 1),
            "heldout_cpu_seconds": round(cpu_seconds() - cpu - trained[1], 1),
        }
    return reports


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (every thread)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
