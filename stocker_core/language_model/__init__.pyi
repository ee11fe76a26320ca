"""The public names of ``stocker_core.language_model``, imported on first use (``__init__.py``)."""

from .factory import (
    LoadedModel as LoadedModel,
    ModelLoadError as ModelLoadError,
    ModelSpec as ModelSpec,
    create_base as create_base,
    load_base as load_base,
    load_with_adapter as load_with_adapter,
)
from .lora import LoraSpec as LoraSpec, lora_config as lora_config
from .tiny_model import TinyModelSpec as TinyModelSpec
from .forward_return import forward_return as forward_return
from .tokenizer import build_word_tokenizer as build_word_tokenizer
from .choices import score_choices as score_choices, answer_logits as answer_logits
from .clients import (
    ChatClient as ChatClient,
    OpenAIChatClient as OpenAIChatClient,
    TransformersClient as TransformersClient,
    LLMError as LLMError,
)
from .limits import decision_day as decision_day
