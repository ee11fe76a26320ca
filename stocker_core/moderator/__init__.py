"""Training the moderator: its model spec (built by the language-model floor's factory,
``stocker_core.language_model``), the dataset of train-split steps, the SFT warm start, GRPO on the
environment's reward, and the trained moderators as policies.

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports no torch.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
