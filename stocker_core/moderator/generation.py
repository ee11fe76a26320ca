"""Greedy generation of moderator completions, batched, for evaluation and the policies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stocker_core.language_model.factory import LoadedModel
from stocker_core.moderator.prompts import chat_messages, compact_prompt

WORD_COMPLETION_TOKENS = 3
"""``side size <eos>``: all a word-model completion needs."""
CHAT_COMPLETION_TOKENS = 8


def render_prompt(loaded: LoadedModel, words: str, text: str) -> str:
    """The prompt string the model reads: bucket words for the tiny model, the compact digits
    for a pretrained model set to it (``prompts.compact_prompt``), the chat template around the
    English text for a chat model, the plain text otherwise."""
    if loaded.prompt_style == "words":
        return words
    if loaded.prompt_style == "compact":
        return compact_prompt(words)
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
    if loaded.prompt_style == "words" and len(prompts) == 1:
        return [_greedy_one(loaded, prompts[0], max_new_tokens)]
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


def _greedy_one(loaded: LoadedModel, prompt: str, max_new_tokens: int) -> str:
    """One prompt of a word model, greedily, with plain forward passes: the same tokens as
    ``model.generate`` (a few-token completion does not need its cache or its ~10 ms of
    per-call set-up, which dominates the policies' step time)."""
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=True)["input_ids"].to(loaded.device)
    prompt_length = ids.shape[1]
    model.eval()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            next_id = model(input_ids=ids).logits[:, -1, :].argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
            if int(next_id) == tokenizer.eos_token_id:
                break
    return tokenizer.decode(ids[0, prompt_length:], skip_special_tokens=True).strip()
