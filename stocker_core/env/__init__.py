"""The trading environment: episodes, portfolio accounting, the reward, the exact ideal
trajectory, the environment and its Gymnasium wrapper, policies, replay grader, HTTP server.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "Action": "actions",
    "Side": "actions",
    "parse_action": "actions",
    "Observation": "environment",
    "StepResult": "environment",
    "TradingEnv": "environment",
    "EpisodeDoneError": "environment",
    "SnapshotError": "environment",
    "Episode": "episode",
    "load_episode": "episode",
    "episode_from_bars": "episode",
    "episode_from_closes": "episode",
    "grade_batch": "grader",
    "grade_trajectory": "grader",
    "sweep": "grader",
    "GradeResult": "grader",
    "StockerGymEnv": "gym_env",
    "ideal_trajectory": "ideal",
    "greedy_trajectory": "ideal",
    "TrajectoryResult": "ideal",
    "Policy": "policies",
    "make_policy": "policies",
    "register_policy": "policies",
    "run_episode": "policies",
    "Portfolio": "portfolio",
    "max_affordable": "portfolio",
    "RewardParams": "rewards",
    "RewardBreakdown": "rewards",
    "step_reward": "rewards",
    "step_rewards": "rewards",
    "create_app": "server",
    "StockerEnvClient": "client",
    "EnvClientError": "client",
    "context_symbols": "peers",
    "Task": "tasks",
    "get_task": "tasks",
    "resolve_episode_key": "tasks",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
