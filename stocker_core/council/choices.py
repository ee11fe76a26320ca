"""Scored choices: a causal LM's probability of each answer of a fixed set after a prompt.

Instead of letting a model write free text and parsing it (which a small model fails at:
it restates its input), the prompt is run once (one prefill, its key/value cache kept) and
every answer is scored in one batched pass over that cache. An answer's score is the sum of
its tokens' log-probabilities; the softmax of the scores over the set is the distribution.
Answers should be prefix-free (end each with a terminator such as ``,`` or ``"``), or a
short answer also collects the mass of the longer ones it begins.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "VOTE_ANSWERS",
    "VOTE_PREFIX",
    "VOTE_VALUES",
    "answer_token_ids",
    "confidence_of",
    "expected_value",
    "score_choices",
]

VOTE_PREFIX = '{"signal":'
"""What the assistant's reply starts with before a vote is scored."""
VOTE_VALUES = (-1.0, -0.5, 0.0, 0.5, 1.0)
VOTE_ANSWERS = (" -1,", " -0.5,", " 0,", " 0.5,", " 1,")
"""The vote answers as continuations of ``VOTE_PREFIX`` (the comma keeps them prefix-free)."""


def answer_token_ids(tokenizer: Any, answers: Sequence[str]) -> list[list[int]]:
    """Token ids of each answer as a continuation (no special tokens added)."""
    ids = [list(tokenizer(a, add_special_tokens=False)["input_ids"]) for a in answers]
    empty = [a for a, i in zip(answers, ids, strict=True) if not i]
    if empty:
        raise ValueError(f"answers {empty!r} encode to no tokens")
    return ids


def score_choices(
    model: Any, tokenizer: Any, prompt_ids: Sequence[int] | Any, answers: Sequence[str | Sequence[int]]
) -> np.ndarray:
    """Probabilities (summing to 1) of ``answers`` continuing ``prompt_ids`` under ``model``.

    One prefill of the prompt (``use_cache``), then one batched forward pass of every
    answer over a copy of that cache. ``answers`` are strings (tokenized without special
    tokens) or token-id lists. Never generates text, so there is nothing to parse.
    """
    import torch

    if not len(answers):
        raise ValueError("score_choices needs at least one answer")
    ids = [list(a) if not isinstance(a, str) else None for a in answers]
    if any(i is None for i in ids):
        ids = [
            i if i is not None else answer_token_ids(tokenizer, [a])[0]
            for i, a in zip(ids, answers, strict=True)
        ]
    prompt = torch.as_tensor(prompt_ids, dtype=torch.long).reshape(1, -1)
    if prompt.shape[1] == 0:
        raise ValueError("score_choices needs a non-empty prompt")
    device = next(model.parameters()).device
    prompt = prompt.to(device)
    n = len(ids)
    longest = max(len(i) for i in ids)
    with torch.no_grad():
        first = model(input_ids=prompt, use_cache=True)
        first_logp = torch.log_softmax(first.logits[0, -1].float(), dim=-1)
        scores = [float(first_logp[i[0]]) for i in ids]
        if longest > 1:
            # the answers' tokens but the last are the inputs that predict the rest
            width = longest - 1
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
            inputs = torch.full((n, width), int(pad), dtype=torch.long, device=device)
            mask = torch.zeros((n, prompt.shape[1] + width), dtype=torch.long, device=device)
            mask[:, : prompt.shape[1]] = 1
            for row, answer in enumerate(ids):
                if len(answer) > 1:
                    inputs[row, : len(answer) - 1] = torch.tensor(answer[:-1], device=device)
                    mask[row, prompt.shape[1] : prompt.shape[1] + len(answer) - 1] = 1
            cache = copy.deepcopy(_cache_of(first))
            cache.batch_repeat_interleave(n)
            rest = model(
                input_ids=inputs, attention_mask=mask, **{_cache_argument(model): cache}, use_cache=True
            )
            logp = torch.log_softmax(rest.logits.float(), dim=-1)
            for row, answer in enumerate(ids):
                for j in range(1, len(answer)):
                    scores[row] += float(logp[row, j - 1, answer[j]])
    top = max(scores)
    weights = np.array([math.exp(s - top) for s in scores])
    return weights / weights.sum()


def _cache_of(output: Any) -> Any:
    """The key/value cache of a forward pass (``cache`` in transformers 5.2x, formerly
    ``past_key_values``)."""
    cache = output.get("cache") if hasattr(output, "get") else None
    return cache if cache is not None else output.past_key_values


def _cache_argument(model: Any) -> str:
    """The forward argument that takes a cache in this transformers version, read off the
    base model's ``forward`` (a PEFT wrapper's takes ``**kwargs`` and passes them on)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    forward = getattr(base, "forward", None)
    try:
        names = inspect.signature(forward).parameters if forward is not None else {}
    except (TypeError, ValueError):
        names = {}
    return "cache" if "cache" in names else "past_key_values"


def expected_value(probabilities: Sequence[float], values: Sequence[float] = VOTE_VALUES) -> float:
    """The probability-weighted answer value."""
    return float(np.dot(np.asarray(probabilities, float), np.asarray(values, float)))


def confidence_of(probabilities: Sequence[float]) -> float:
    """1 − the distribution's entropy over log(number of answers): 0 when every answer is
    equally likely, 1 when one answer has all the mass."""
    p = np.asarray(probabilities, float)
    if len(p) < 2:
        return 1.0
    nz = p[p > 0]
    entropy = float(-(nz * np.log(nz)).sum())
    return float(min(1.0, max(0.0, 1.0 - entropy / math.log(len(p)))))
