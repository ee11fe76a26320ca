"""The public names of ``stocker_core.env``, imported on first use (``__init__.py``)."""

from .actions import Action as Action, Side as Side, parse_action as parse_action
from .environment import (
    Observation as Observation,
    StepResult as StepResult,
    TradingEnv as TradingEnv,
    EpisodeDoneError as EpisodeDoneError,
    SnapshotError as SnapshotError,
)
from .episode import (
    Episode as Episode,
    load_episode as load_episode,
    episode_from_bars as episode_from_bars,
    episode_from_closes as episode_from_closes,
)
from .grader import (
    grade_batch as grade_batch,
    grade_trajectory as grade_trajectory,
    sweep as sweep,
    GradeResult as GradeResult,
)
from .gym_env import StockerGymEnv as StockerGymEnv
from .ideal import (
    ideal_trajectory as ideal_trajectory,
    greedy_trajectory as greedy_trajectory,
    TrajectoryResult as TrajectoryResult,
)
from .policies import (
    Policy as Policy,
    make_policy as make_policy,
    register_policy as register_policy,
    run_episode as run_episode,
)
from .portfolio import Portfolio as Portfolio, max_affordable as max_affordable
from .rewards import (
    RewardParams as RewardParams,
    RewardBreakdown as RewardBreakdown,
    step_reward as step_reward,
    step_rewards as step_rewards,
)
from .server import create_app as create_app
from .client import StockerEnvClient as StockerEnvClient, EnvClientError as EnvClientError
from .peers import context_symbols as context_symbols
from .tasks import Task as Task, get_task as get_task, resolve_episode_key as resolve_episode_key
