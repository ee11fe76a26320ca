"""Training the moderator: its model spec (built by the language-model floor's factory,
``stocker_core.lm``), the dataset of train-split steps, the SFT warm start, GRPO on the
environment's reward, and the trained moderators as policies.

Public names are resolved lazily (PEP 562): importing the package imports no torch.
"""

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
