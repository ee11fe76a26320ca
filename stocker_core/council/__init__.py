"""The council: seven specialist analysts (rule-based or any LLM), their cached votes,
and the moderator that merges them into one trade. The LLM clients and scored choices it
uses live one floor down, in ``stocker_core.language_model``.

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports nothing heavy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
