"""The public names of ``stocker_core.moderator``, imported on first use (``__init__.py``)."""

from .config import (
    TrainingConfig as TrainingConfig,
    TrainingConfigError as TrainingConfigError,
    load_config as load_config,
)
from .prompts import (
    ModeratorState as ModeratorState,
    parse_completion as parse_completion,
    prompt_words as prompt_words,
    prompt_text as prompt_text,
)
from .dataset import build_rows as build_rows
from .selection import (
    SplitGuard as SplitGuard,
    SplitLeakError as SplitLeakError,
    select_episodes as select_episodes,
)
from .votes import episode_votes as episode_votes
from .rewards import RolloutReward as RolloutReward
from .sft import run_sft as run_sft
from .reward_regression import run_reward_regression as run_reward_regression
from .training import StageReport as StageReport, train as train, model_dir as model_dir
from .policy import ModeratorPolicy as ModeratorPolicy
