"""The baselines the trained policies are measured against, each a policy of the registry:
the rules (``rules``: MACD crossover, Z-score mean reversion), the AR forecast
(``forecast``), the headline-sentiment oracle (``oracle``) and the deep-RL agents (``drl``:
stable-baselines3 A2C and PPO, trained on the train split).

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports nothing heavy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
