"""Greedy generation of moderator completions, batched, for evaluation and the policies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stocker_core.training.models import LoadedModel
from stocker_core.training.prompts import chat_messages

WORD_COMPLETION_TOKENS = 3
"""``side size <eos>``: all a word-model completion needs."""
CHAT_COMPLETION_TOKENS = 8


def render_prompt(loaded: LoadedModel, words: str, text: str) -> str:
    """The prompt string the model reads: bucket words for the tiny model, the chat
    template around the English text for a chat model, the plain text otherwise."""
    if loaded.prompt_style == "words":
        return words
    if loaded.prompt_style == "chat":
        return loaded.tokenizer.apply_chat_template(
            chat_messages(text), tokenize=False, add_generation_prompt=True
        )
    return text


def generate(
    loaded: LoadedModel, prompts: Sequence[str], max_new_tokens: int | None = None, batch_size: int = 64
) -> list[str]:
    """Greedy completions of rendered ``prompts`` (left-padded batches), special tokens dropped."""
    import torch

    if max_new_tokens is None:
        words = loaded.prompt_style == "words"
        max_new_tokens = WORD_COMPLETION_TOKENS if words else CHAT_COMPLETION_TOKENS
    tokenizer, model = loaded.tokenizer, loaded.model
    tokenizer.padding_side = "left"
    add_special = loaded.prompt_style == "words"
    outputs: list[str] = []
    model.eval()
    for start in range(0, len(prompts), batch_size):
        batch = list(prompts[start : start + batch_size])
        encoded: dict[str, Any] = tokenizer(
            batch, return_tensors="pt", padding=True, add_special_tokens=add_special
        )
        encoded.pop("token_type_ids", None)
        encoded = {k: v.to(loaded.device) for k, v in encoded.items()}
        with torch.no_grad():
            out = model.generate(
                **encoded,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
            )
        new = out[:, encoded["input_ids"].shape[1] :]
        outputs += tokenizer.batch_decode(new, skip_special_tokens=True)
    return [o.strip() for o in outputs]
