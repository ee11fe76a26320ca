"""Scored choices: a causal LM's log-likelihood of each answer of a fixed set after a prompt.

One implementation serves inference (the council's scored votes, the agent's final answer,
a trained moderator's decision) and training (the moderator's exact expected-reward
gradient over its nine answers). Instead of letting a model write free text and parsing it
(which a small model fails at: it restates its input), every answer is scored: the sum of
its tokens' log-probabilities after the prompt; the softmax of the scores over the set is
the distribution. Reading a decision this way cannot fail to parse, and the same numbers
train the policy.

Prompts of one length (a single prompt, or the tiny moderator's fixed grammar) are read
once each with the answers laid after them as a tree (``answer_tree``): one pass of the
prompt plus one position per distinct answer prefix. Prompts of different lengths are
scored as one padded sequence per prompt + answer. Both give the same numbers (tested).

Answers should be prefix-free (end each with a terminator such as ``,``, ``"`` or
``<eos>``), or a short answer also collects the mass of the longer ones it begins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stocker_core.language_model.policy_gradient import collate, sequence_logprobs

__all__ = [
    "AnswerTree",
    "answer_logits",
    "answer_token_ids",
    "answer_tree",
    "confidence_of",
    "expected_value",
    "full_sequence_logits",
    "score_choices",
    "tree_logits",
]


def answer_token_ids(tokenizer: Any, answers: Sequence[str]) -> list[list[int]]:
    """Token ids of each answer as a continuation (no special tokens added)."""
    ids = [list(tokenizer(a, add_special_tokens=False)["input_ids"]) for a in answers]
    empty = [a for a, i in zip(answers, ids, strict=True) if not i]
    if empty:
        raise ValueError(f"answers {empty!r} encode to no tokens")
    return ids


def answer_logits(
    model: Any, heads: Sequence[Sequence[int]], tails: Sequence[Sequence[int]], pad_id: int, device: Any
) -> Any:
    """Summed log-likelihood of each answer (``tails``, token ids) after each prompt
    (``heads``, token ids), ``[len(heads), len(tails)]``; with gradient when the model
    trains (wrap in ``torch.no_grad`` to read).

    When every prompt has the same length each is read once with the answers laid after it
    as a tree (``tree_logits``); otherwise every prompt + answer is scored as a whole padded
    sequence (``full_sequence_logits``)."""
    if len({len(h) for h in heads}) == 1:
        return tree_logits(model, heads, tails, device)
    return full_sequence_logits(model, heads, tails, pad_id, device)


def full_sequence_logits(
    model: Any, heads: Sequence[Sequence[int]], tails: Sequence[Sequence[int]], pad_id: int, device: Any
) -> Any:
    """``answer_logits`` by scoring every prompt + answer as one right-padded sequence."""
    encoded = [
        (list(head) + list(tail), [0] * len(head) + [1] * len(tail)) for head in heads for tail in tails
    ]
    batch = collate(pad_id, encoded, device)
    return sequence_logprobs(model, batch).reshape(len(heads), len(tails))


@dataclass(frozen=True)
class AnswerTree:
    """The answers' tokens as a trie laid after a prompt of ``head`` tokens: ``nodes`` are the
    distinct proper prefixes of the answers (each placed once, as its last token), ``mask``
    lets a node see the prompt and its own ancestors only, ``positions`` are its depth after
    the prompt, and ``reads[a]`` are the rows whose next-token log-probabilities score
    answer ``a``'s tokens."""

    tokens: list[int]
    positions: list[int]
    mask: Any
    reads: list[list[int]]


def answer_tree(head: int, tails: Sequence[Sequence[int]]) -> AnswerTree:
    """The tree of ``tails`` after a ``head``-token prompt (see ``AnswerTree``)."""
    import torch

    index: dict[tuple[int, ...], int] = {}
    for tail in tails:
        for j in range(1, len(tail)):
            index.setdefault(tuple(tail[:j]), len(index))
    size = head + len(index)
    mask = torch.zeros(size, size, dtype=torch.bool)
    mask[:head, :head] = torch.ones(head, head, dtype=torch.bool).tril()
    positions = list(range(head)) + [0] * len(index)
    tokens = [0] * len(index)
    for prefix, i in index.items():
        row = head + i
        mask[row, :head] = True
        for j in range(1, len(prefix) + 1):
            mask[row, head + index[prefix[:j]]] = True
        positions[row] = head + len(prefix) - 1
        tokens[i] = prefix[-1]
    reads = [[head - 1] + [head + index[tuple(tail[:j])] for j in range(1, len(tail))] for tail in tails]
    return AnswerTree(tokens, positions, mask, reads)


LARGE_VOCABULARY = 4096
"""Above this vocabulary the output head is applied only where an answer is read (the last
prompt token and the tree): SmolLM2's 49,152-word head over all 44 prompt positions cost about
a fifth of a pass. The tiny model's small head keeps its full pass (its numbers unchanged)."""


def tree_logits(
    model: Any, heads: Sequence[Sequence[int]], tails: Sequence[Sequence[int]], device: Any
) -> Any:
    """``answer_logits`` for prompts of one length: one forward pass of each prompt followed
    by the answers' tree (a custom 4-D attention mask and position ids)."""
    import torch

    n = len(heads)
    tree = answer_tree(len(heads[0]), tails)
    ids = torch.tensor([list(head) + tree.tokens for head in heads], dtype=torch.long, device=device)
    size = ids.shape[1]
    positions = torch.tensor(tree.positions, dtype=torch.long, device=device).expand(n, size)
    mask = tree.mask.to(device)[None, None].expand(n, 1, size, size)
    extra = {}
    if int(getattr(getattr(model, "config", None), "vocab_size", 0) or 0) > LARGE_VOCABULARY:
        extra["logits_to_keep"] = size - (len(heads[0]) - 1)  # the last prompt token and the tree
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, **extra).logits
    offset = size - logits.shape[1]
    logp = torch.log_softmax(logits.float(), dim=-1)
    scores = [
        sum(logp[:, row - offset, token] for row, token in zip(rows, tail, strict=True))
        for rows, tail in zip(tree.reads, tails, strict=True)
    ]
    return torch.stack(scores, dim=1)


def score_choices(
    model: Any, tokenizer: Any, prompt_ids: Sequence[int] | Any, answers: Sequence[str | Sequence[int]]
) -> np.ndarray:
    """Probabilities (summing to 1) of ``answers`` continuing ``prompt_ids`` under ``model``,
    without gradient: ``answer_logits`` of the one prompt (one pass of the prompt and the
    answers' tree). ``answers`` are strings (tokenized without special tokens) or token-id
    lists. Never generates text, so there is nothing to parse.
    """
    import torch

    if not len(answers):
        raise ValueError("score_choices needs at least one answer")
    tails = [list(a) if not isinstance(a, str) else answer_token_ids(tokenizer, [a])[0] for a in answers]
    head = [int(i) for i in torch.as_tensor(prompt_ids, dtype=torch.long).reshape(-1).tolist()]
    if not head:
        raise ValueError("score_choices needs a non-empty prompt")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with torch.no_grad():
        logits = answer_logits(model, [head], tails, int(pad), device)[0]
    scores = [float(s) for s in logits]
    top = max(scores)
    weights = np.array([math.exp(s - top) for s in scores])
    return weights / weights.sum()


def expected_value(probabilities: Sequence[float], values: Sequence[float]) -> float:
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
