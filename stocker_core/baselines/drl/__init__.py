"""The deep-RL baselines (stable-baselines3 A2C and PPO): ``agents`` (the ``a2c``/``ppo``
environment policies), ``training`` (seeded training through the Gymnasium wrapper),
``data`` (train-split episodes), ``store`` (models under ``$STOCKER_HOME/models/drl``),
``plots`` (reward curves) and ``cli`` (``stocker drl``).

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports nothing heavy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
