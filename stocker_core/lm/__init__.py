"""The language-model floor, below the council, the moderator and the agent: the model
factory (``tiny``, ``smollm2``, any Hugging Face id) built from a ``ModelSpec``, the word
tokenizer over a vocabulary it is given, the training runtime, the LLM clients (OpenAI-
compatible HTTP, local ``transformers``) and their limits, scored choices (one
implementation for inference and training) and the policy-gradient machinery.

Public names are resolved lazily (PEP 562): importing the package imports no torch.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "LoadedModel": "factory",
    "ModelLoadError": "factory",
    "ModelSpec": "factory",
    "create_base": "factory",
    "load_base": "factory",
    "load_with_adapter": "factory",
    "lora_config": "factory",
    "build_word_tokenizer": "tokenizer",
    "score_choices": "choices",
    "answer_logits": "choices",
    "ChatClient": "clients",
    "OpenAIChatClient": "clients",
    "TransformersClient": "clients",
    "LLMError": "clients",
    "decision_day": "limits",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "factory":
        import stocker_core.lm.factory as module
    elif name == "tokenizer":
        import stocker_core.lm.tokenizer as module
    elif name == "choices":
        import stocker_core.lm.choices as module
    elif name == "clients":
        import stocker_core.lm.clients as module
    elif name == "limits":
        import stocker_core.lm.limits as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
