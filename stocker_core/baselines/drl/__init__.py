"""The deep-RL baselines (stable-baselines3 A2C and PPO): ``agents`` (the ``a2c``/``ppo``
environment policies), ``training`` (seeded training through the Gymnasium wrapper),
``data`` (train-split episodes), ``store`` (models under ``$STOCKER_HOME/models/drl``),
``plots`` (reward curves) and ``cli`` (``stocker drl``).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "DrlPolicy": "agents",
    "load_drl_agent": "agents",
    "make_drl_policy": "agents",
    "DrlConfig": "training",
    "train_drl_agent": "training",
    "train_drl_agents": "training",
    "train_from_warehouse": "training",
    "ALGOS": "store",
    "DrlTrainingResult": "store",
    "current_result": "store",
    "train_split_episodes": "data",
    "reward_curves_png": "plots",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
