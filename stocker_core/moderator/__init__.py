"""Training the moderator: its model spec (built by the language-model floor's factory,
``stocker_core.lm``), the dataset of train-split steps, the SFT warm start, GRPO on the
environment's reward, and the trained moderators as policies.

Public names are resolved lazily (PEP 562): importing the package imports no torch.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "TrainingConfig": "config",
    "TrainingConfigError": "config",
    "load_config": "config",
    "ModeratorState": "prompts",
    "parse_completion": "prompts",
    "prompt_words": "prompts",
    "prompt_text": "prompts",
    "build_rows": "dataset",
    "SplitGuard": "selection",
    "SplitLeakError": "selection",
    "select_episodes": "selection",
    "episode_votes": "votes",
    "RolloutReward": "rewards",
    "run_sft": "sft",
    "run_grpo": "grpo",
    "StageReport": "training",
    "train": "training",
    "model_dir": "training",
    "ModeratorPolicy": "policy",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "config":
        import stocker_core.moderator.config as module
    elif name == "prompts":
        import stocker_core.moderator.prompts as module
    elif name == "dataset":
        import stocker_core.moderator.dataset as module
    elif name == "selection":
        import stocker_core.moderator.selection as module
    elif name == "votes":
        import stocker_core.moderator.votes as module
    elif name == "rewards":
        import stocker_core.moderator.rewards as module
    elif name == "sft":
        import stocker_core.moderator.sft as module
    elif name == "grpo":
        import stocker_core.moderator.grpo as module
    elif name == "training":
        import stocker_core.moderator.training as module
    elif name == "policy":
        import stocker_core.moderator.policy as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
