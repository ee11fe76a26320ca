"""The language-model floor, below the council, the moderator and the agent: the model
factory (``tiny``, ``smollm2``, any Hugging Face id) built from a ``ModelSpec``, the tiny
model's sizes and the one LoRA spec and builder (each with the block of config fields both
learners' configs share), the forward return both learners' rewards read, the word
tokenizer over a vocabulary it is given, the training runtime, the LLM clients (OpenAI-
compatible HTTP, local ``transformers``) and their limits, scored choices (one
implementation for inference and training) and the policy-gradient machinery.

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports no torch.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
