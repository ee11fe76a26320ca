"""The trained moderators as environment policies: ``moderator_base``, ``moderator_sft`` and
``moderator_grpo`` in the one policy registry (``stocker episode run --policy moderator_grpo``).

Each step reads the council's cached votes for the observation's ticker and date (the
rule council fills missing ones through its cache), builds the prompt and decides as the
stage was trained to (``decode`` in its training.json): by scored choices, the most
likely of the nine answers (cannot fail to parse), or by greedy text that is parsed
(unparsable: hold, counted). Models are loaded once per process; identical prompts are
decided once.
"""

from __future__ import annotations

import json
from pathlib import Path

from stocker_core.config import Settings, get_settings
from stocker_core.council.backends import get_backend
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.policies import register_policy
from stocker_core.training.choices import choose_answers
from stocker_core.training.dataset import moderator_state
from stocker_core.training.generation import generate, render_prompt
from stocker_core.training.models import LoadedModel, ModelLoadError
from stocker_core.training.pipeline import REPORT_FILE, load_moderator, model_dir
from stocker_core.training.prompts import parse_completion, prompt_text, prompt_words
from stocker_core.training.runtime import quiet_libraries
from stocker_core.training.votes import episode_votes
from stocker_core.warehouse.db import Warehouse

_MODELS: dict[tuple[str, float], LoadedModel] = {}
_COMPLETIONS: dict[int, dict[str, str]] = {}
"""Greedy completions per loaded model (keyed by its id; ``_MODELS`` keeps it alive), shared by
every episode of the process: rolling windows overlap, so most prompts recur."""


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
        _MODELS[key] = load_moderator(settings, stage)
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


class ModeratorPolicy:
    """A trained moderator (base, SFT or GRPO) playing one episode."""

    def __init__(self, env: TradingEnv, stage: str, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self.loaded = cached_moderator(settings, stage)
        backend = get_backend(settings, trained_vote_backend(settings, stage))
        episode = env.episode
        votes = episode_votes([episode], settings, Warehouse(settings.warehouse_path), backend)
        self.votes = [votes.for_day(episode.ticker, d.date().isoformat()) for d in episode.dates]
        self.cost = env.params.transaction_cost
        self.starting_cash = env.params.starting_cash
        self.unparsable = 0
        self.decode = trained_decode(settings, stage)
        self._completions = _COMPLETIONS.setdefault(id(self.loaded), {})

    def completion(self, prompt: str) -> str:
        """The model's answer to a rendered prompt (each distinct prompt decided once)."""
        key = f"{self.decode}:{prompt}"
        if key not in self._completions:
            if self.decode == "scored":
                self._completions[key] = choose_answers(self.loaded, [prompt])[0]
            else:
                self._completions[key] = generate(self.loaded, [prompt])[0]
        return self._completions[key]

    def act(self, observation: Observation) -> Action:
        state = moderator_state(observation, self.votes[observation.step], self.starting_cash)
        prompt = render_prompt(self.loaded, prompt_words(state), prompt_text(state))
        parsed = parse_completion(
            self.completion(prompt), observation.cash, observation.position, observation.close, self.cost
        )
        self.unparsable += int(not parsed.parsed)
        return parsed.action


for _stage in ("base", "sft", "grpo"):
    register_policy(f"moderator_{_stage}", lambda env, seed, stage=_stage: ModeratorPolicy(env, stage))
