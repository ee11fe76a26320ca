"""The tool-using single agent (SPEC §2): point-in-time tools in four families, a ReAct loop
with a call cap, the result + process reward, the scripted baseline, model policies and RL
training.

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports nothing heavy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
