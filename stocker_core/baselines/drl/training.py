"""Train the deep-RL baselines (stable-baselines3 A2C and PPO) through the Gymnasium
wrapper on a list of training episodes, seeded and single-threaded so a rerun gives
the same weights."""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from stocker_core.baselines.drl.store import (
    ALGOS,
    DrlTrainingResult,
    check_algo,
    drl_model_dir,
    publish_result,
)
from stocker_core.config import Settings
from stocker_core.env.episode import Episode
from stocker_core.env.gym_env import DEFAULT_FRACTIONS, StockerGymEnv
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import EmptyDataError, StockerError


class DrlConfigError(StockerError, ValueError):
    """A training budget or setting that cannot work."""


@dataclass(frozen=True)
class DrlConfig:
    """Everything a deep-RL training run depends on, with the default budget
    (20,480 timesteps per algorithm: both agents in ~40 s on 2 idle CPU cores)."""

    algos: tuple[str, ...] = ALGOS
    """The stable-baselines3 algorithms trained, each a policy of its name (``a2c``, ``ppo``)."""
    timesteps: int = 20_480
    """Environment steps each algorithm trains for."""
    seed: int = 0
    """Seed of the training run (weights, episode order)."""
    window: int = 10
    """Daily log returns in the observation (StockerGymEnv ``window``)."""
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    """Buy/sell sizes as fractions of what is affordable / held (StockerGymEnv ``fractions``)."""
    ppo_n_steps: int = 2048
    """PPO's rollout length between updates."""
    ppo_batch_size: int = 64
    """PPO's minibatch size."""
    curve_points: int = 50
    """Most points kept in the training-reward curve."""

    def __post_init__(self) -> None:
        for algo in self.algos:
            check_algo(algo)
        if not self.algos:
            raise DrlConfigError("algos is empty: name at least one of a2c, ppo")
        if self.timesteps < 1 or self.window < 1 or self.curve_points < 1:
            raise DrlConfigError("timesteps, window and curve_points must be >= 1")
        if not self.fractions or any(not 0 < f <= 1 for f in self.fractions):
            raise DrlConfigError(f"fractions must lie in (0, 1], got {self.fractions}")
        if self.ppo_n_steps < 2 or not 1 < self.ppo_batch_size <= self.ppo_n_steps:
            raise DrlConfigError("need ppo_n_steps >= 2 and 1 < ppo_batch_size <= ppo_n_steps")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (tuples as lists)."""
        return json.loads(json.dumps(asdict(self)))


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one thread (deterministic, and kind to a shared 2-core box)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _model(algo: str, env: Any, config: DrlConfig) -> Any:
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.logger import Logger

    common = {"seed": config.seed, "device": "cpu", "verbose": 0}
    if algo == "ppo":
        model = PPO("MlpPolicy", env, n_steps=config.ppo_n_steps, batch_size=config.ppo_batch_size, **common)
    else:
        model = A2C("MlpPolicy", env, **common)
    # a logger with no output: SB3's default one makes an empty /tmp/SB3-<time> folder per run
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def reward_curve(rewards: Sequence[float], lengths: Sequence[int], points: int) -> list[tuple[int, float]]:
    """Mean episode reward per bucket of consecutive training episodes, as
    (timesteps at the bucket's end, mean reward); at most ``points`` buckets."""
    if not len(rewards):
        return []
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    buckets = np.array_split(np.arange(len(rewards)), min(points, len(rewards)))
    values = np.asarray(rewards, dtype=np.float64)
    return [(int(ends[b[-1]]), float(values[b].mean())) for b in buckets]


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def train_drl_agent(
    algo: str,
    episodes: Sequence[Episode],
    home: Path | str,
    config: DrlConfig | None = None,
    params: RewardParams | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DrlTrainingResult:
    """Train ``algo`` on ``episodes`` (the train split only), save the SB3 zip under
    ``$STOCKER_HOME/models/drl/<algo>/`` and make it the current model."""
    import stable_baselines3
    import torch
    from stable_baselines3.common.monitor import Monitor

    algo = check_algo(algo)
    config = config or DrlConfig()
    episodes = list(episodes)
    if not episodes:
        raise EmptyDataError(
            f"no training episodes for {algo}: materialize episodes for the train split first"
        )
    env = Monitor(StockerGymEnv(episodes, params, config.fractions, config.window))
    with single_thread():
        started = time.perf_counter()
        model = _model(algo, env, config)
        callback = _progress_callback(progress, config.timesteps) if progress else None
        model.learn(total_timesteps=config.timesteps, progress_bar=False, callback=callback)
        wall = time.perf_counter() - started
    folder = drl_model_dir(home, algo)
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / f".training-{os.getpid()}.zip"
    model.save(scratch)
    sha = file_sha256(scratch)
    final = folder / f"{sha[:12]}.zip"
    os.replace(scratch, final)
    result = DrlTrainingResult(
        algo=algo,
        model_path=str(final),
        sha256=sha,
        wall_seconds=round(wall, 3),
        timesteps=int(model.num_timesteps),
        seed=config.seed,
        episode_keys=[ep.key for ep in episodes],
        config={**config.to_dict(), "algos": [algo], "reward_params": asdict(params) if params else None},
        reward_curve=reward_curve(env.get_episode_rewards(), env.get_episode_lengths(), config.curve_points),
        created_at=datetime.now().isoformat(timespec="seconds"),
        versions={"stable_baselines3": stable_baselines3.__version__, "torch": torch.__version__},
    )
    publish_result(result, home)
    return result


def train_drl_agents(
    episodes: Sequence[Episode],
    home: Path | str,
    config: DrlConfig | None = None,
    params: RewardParams | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[DrlTrainingResult]:
    """Train every algorithm of ``config.algos`` on the same episodes;
    ``progress(done, total)`` counts timesteps over all of them."""
    config = config or DrlConfig()
    total = config.timesteps * len(config.algos)
    results = []
    for index, algo in enumerate(config.algos):
        offset = index * config.timesteps
        step = (lambda done, _n, base=offset: progress(base + done, total)) if progress else None
        results.append(train_drl_agent(algo, episodes, home, config, params, step))
    return results


def _progress_callback(progress: Callable[[int, int], None], total: int):
    """An SB3 callback that reports ``progress(timesteps done, total)`` after every step
    (the caller throttles)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class ReportProgress(BaseCallback):
        def _on_step(self) -> bool:
            progress(min(self.num_timesteps, total), total)
            return True

    return ReportProgress()


def train_from_warehouse(
    settings: Settings,
    config: DrlConfig | None = None,
    run_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Episode], list[DrlTrainingResult]]:
    """Train ``config.algos`` on the stored train-split episodes under ``settings.home``
    with its reward settings, and record one ``models.runs`` row per model (``run_id``
    + ``:<algo>``; default a fresh id). Returns the episodes and the results."""
    from stocker_core.baselines.drl.data import train_split_episodes
    from stocker_core.baselines.drl.store import model_run_row, record_model_runs
    from stocker_core.warehouse.db import Warehouse

    warehouse = Warehouse(settings.warehouse_path)
    episodes = train_split_episodes(settings, warehouse)
    params = RewardParams.from_settings(settings)
    results = train_drl_agents(episodes, settings.home, config, params, progress)
    run_id = run_id or f"drl-{uuid.uuid4().hex[:12]}"
    record_model_runs(warehouse, [model_run_row(r, f"{run_id}:{r.algo}") for r in results])
    return episodes, results
