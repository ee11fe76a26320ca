"""The deep-RL baselines (stable-baselines3 A2C and PPO): ``agents`` (the ``a2c``/``ppo``
environment policies), ``training`` (seeded training through the Gymnasium wrapper),
``data`` (train-split episodes), ``store`` (models under ``$STOCKER_HOME/models/drl``),
``plots`` (reward curves) and ``cli`` (``stocker drl``).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

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


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "agents":
        import stocker_core.baselines.drl.agents as module
    elif name == "training":
        import stocker_core.baselines.drl.training as module
    elif name == "store":
        import stocker_core.baselines.drl.store as module
    elif name == "data":
        import stocker_core.baselines.drl.data as module
    elif name == "plots":
        import stocker_core.baselines.drl.plots as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
