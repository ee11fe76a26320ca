"""The public names of ``stocker_core.baselines.drl``, imported on first use (``__init__.py``)."""

from .agents import (
    DrlPolicy as DrlPolicy,
    load_drl_agent as load_drl_agent,
    make_drl_policy as make_drl_policy,
)
from .training import (
    DrlConfig as DrlConfig,
    train_drl_agent as train_drl_agent,
    train_drl_agents as train_drl_agents,
    train_from_warehouse as train_from_warehouse,
)
from .store import ALGOS as ALGOS, DrlTrainingResult as DrlTrainingResult, current_result as current_result
from .data import train_split_episodes as train_split_episodes
from .plots import reward_curves_png as reward_curves_png
