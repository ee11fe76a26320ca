"""The trained moderators as environment policies: ``moderator_base``, ``moderator_sft`` and
``moderator_grpo`` in the one policy registry (``stocker episode run --policy moderator_grpo``).

Each step reads the council's cached votes for the observation's ticker and date (the
rule council fills missing ones through its cache), builds the prompt and decides as the
stage was trained to (``decode`` in its training.json): by scored choices, the most
likely of the nine answers (cannot fail to parse), or by greedy text that is parsed
(unparsable: hold, counted). Backtests play many episodes in lockstep (``ModeratorBatch``,
the registry's batch decider: one model call per step for all of them). Models are
loaded once per process; identical prompts are decided once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from stocker_core.config import Settings
from stocker_core.council.backends import get_backend
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.policies import register_policy, require_settings
from stocker_core.language_model.factory import LoadedModel, ModelLoadError
from stocker_core.language_model.runtime import quiet_libraries
from stocker_core.moderator.heldout import ModeratorDecider
from stocker_core.moderator.training import REPORT_FILE, load_moderator, model_dir
from stocker_core.moderator.votes import episode_votes
from stocker_core.warehouse.db import Warehouse

_MODELS: dict[tuple[str, float], LoadedModel] = {}
_DECIDERS: dict[tuple[int, str], ModeratorDecider] = {}
"""One decider (and its answers) per loaded model and decode, shared by every episode of the
process: rolling windows overlap, so most prompts recur."""


def _stamp(folder: Path) -> float:
    files = [p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin")] if folder.is_dir() else []
    return max((p.stat().st_mtime for p in files), default=0.0)


def cached_moderator(settings: Settings, stage: str) -> LoadedModel:
    """The stage's model, loaded once per process (reloaded when its weights change)."""
    folder = model_dir(settings, stage)
    if not folder.is_dir():
        raise ModelLoadError(
            f"no trained moderator_{stage} in {folder}: materialize the training group first "
            "(stocker train, or the training assets)"
        )
    key = (str(folder), _stamp(folder))
    if key not in _MODELS:
        quiet_libraries()
        _MODELS[key] = load_moderator(settings, stage, merged=True)
    return _MODELS[key]


def _trained_config(settings: Settings, stage: str) -> dict:
    report = model_dir(settings, stage) / REPORT_FILE
    return json.loads(report.read_text()).get("config", {}) if report.is_file() else {}


def trained_vote_backend(settings: Settings, stage: str) -> str:
    """The council backend whose votes the stage was trained on (``rule`` if unrecorded)."""
    return _trained_config(settings, stage).get("vote_backend", "rule")


def trained_decode(settings: Settings, stage: str) -> str:
    """How the stage decides: ``scored`` (the default) or ``generate``."""
    return _trained_config(settings, stage).get("decode", "scored")


def _decider(loaded: LoadedModel, decode: str) -> ModeratorDecider:
    key = (id(loaded), decode)  # ``_MODELS`` keeps ``loaded`` alive, so its id stays its own
    if key not in _DECIDERS:
        _DECIDERS[key] = ModeratorDecider(loaded, decode)
    return _DECIDERS[key]


class ModeratorBatch:
    """A trained moderator (base, SFT or GRPO) deciding many episodes at once: step t of
    every live environment in one model call (``decide``), each episode with its own votes."""

    def __init__(self, envs: Sequence[TradingEnv], stage: str, settings: Settings) -> None:
        loaded = cached_moderator(settings, stage)
        backend = get_backend(settings, trained_vote_backend(settings, stage))
        episodes = [env.episode for env in envs]
        votes = episode_votes(episodes, settings, Warehouse(settings.warehouse_path), backend)
        self.votes = [[votes.for_day(e.ticker, d.date().isoformat()) for d in e.dates] for e in episodes]
        self.params = [env.params for env in envs]
        self.decider = _decider(loaded, trained_decode(settings, stage))
        self.unparsable = [0] * len(envs)

    def __call__(self, live: Sequence[int], observations: Sequence[Observation]) -> list[Action]:
        actions: list[Action | None] = [None] * len(live)
        groups: dict[tuple[float, float], list[int]] = {}  # one call per (cash, cost): in practice one
        for j, i in enumerate(live):
            groups.setdefault((self.params[i].starting_cash, self.params[i].transaction_cost), []).append(j)
        for (cash, cost), members in groups.items():
            obs = [observations[j] for j in members]
            votes = [self.votes[live[j]][o.step] for j, o in zip(members, obs, strict=True)]
            for j, (action, parsed) in zip(members, self.decider.decide(obs, votes, cash, cost), strict=True):
                actions[j] = action
                self.unparsable[live[j]] += int(not parsed)
        return actions  # type: ignore[return-value]


class ModeratorPolicy:
    """A trained moderator playing one episode (``ModeratorBatch`` of one environment)."""

    def __init__(self, env: TradingEnv, stage: str, settings: Settings) -> None:
        self.batch = ModeratorBatch([env], stage, settings)

    @property
    def unparsable(self) -> int:
        return self.batch.unparsable[0]

    def act(self, observation: Observation) -> Action:
        return self.batch([0], [observation])[0]


def register_policies() -> None:
    """``moderator_base``, ``moderator_sft`` and ``moderator_grpo`` with batched deciders; the
    last two were fitted on the train split (called by the composition root)."""
    for stage in ("base", "sft", "grpo"):
        name = f"moderator_{stage}"
        register_policy(
            name,
            lambda env, seed, settings, stage=stage, name=name: ModeratorPolicy(
                env, stage, require_settings(name, settings)
            ),
            lambda envs, seeds, settings, stage=stage, name=name: ModeratorBatch(
                envs, stage, require_settings(name, settings)
            ),
            fitted_on_train=stage != "base",
        )
