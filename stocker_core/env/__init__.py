"""The trading environment: episodes, portfolio accounting, the reward, the exact ideal
trajectory, the environment and its Gymnasium wrapper, policies, replay grader, HTTP server.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

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


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "actions":
        import stocker_core.env.actions as module
    elif name == "environment":
        import stocker_core.env.environment as module
    elif name == "episode":
        import stocker_core.env.episode as module
    elif name == "grader":
        import stocker_core.env.grader as module
    elif name == "gym_env":
        import stocker_core.env.gym_env as module
    elif name == "ideal":
        import stocker_core.env.ideal as module
    elif name == "policies":
        import stocker_core.env.policies as module
    elif name == "portfolio":
        import stocker_core.env.portfolio as module
    elif name == "rewards":
        import stocker_core.env.rewards as module
    elif name == "server":
        import stocker_core.env.server as module
    elif name == "client":
        import stocker_core.env.client as module
    elif name == "peers":
        import stocker_core.env.peers as module
    elif name == "tasks":
        import stocker_core.env.tasks as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
