"""The moderator's decision as scored choices: a distribution over its nine answers.

Every answer (``hold q0``, ``buy q1``..``q4``, ``sell q1``..``q4``) is scored by the
model's log-likelihood of the answer and ``<eos>`` after the prompt; the policy is the
softmax over the nine. Reading a decision this way cannot fail to parse, and the same
numbers train the policy (``grpo``: the exact expected gradient over the nine answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stocker_core.training.models import LoadedModel
from stocker_core.training.policy_gradient import collate, sequence_logprobs
from stocker_core.training.prompts import QUARTERS, completion_for

ANSWERS: tuple[str, ...] = (
    completion_for("hold"),
    *(completion_for("buy", q) for q in range(1, QUARTERS + 1)),
    *(completion_for("sell", q) for q in range(1, QUARTERS + 1)),
)
"""The nine answers, in a fixed order: hold, buy q1..q4, sell q1..q4."""


def _prompt_ids(loaded: LoadedModel, prompt: str) -> list[int]:
    # a chat prompt is already templated (its special tokens are in the text)
    add_special = loaded.prompt_style != "chat"
    return list(loaded.tokenizer(prompt, add_special_tokens=add_special)["input_ids"])


def _answer_ids(loaded: LoadedModel) -> list[list[int]]:
    tokenizer = loaded.tokenizer
    return [
        list(tokenizer(" " + answer, add_special_tokens=False)["input_ids"]) + [tokenizer.eos_token_id]
        for answer in ANSWERS
    ]


def encode_choices(loaded: LoadedModel, prompts: Sequence[str]) -> list[tuple[list[int], list[int]]]:
    """(ids, learn mask) of every prompt followed by each answer: ``len(prompts) * 9`` rows,
    the answers of one prompt consecutive; the mask marks the answer's tokens."""
    answers = _answer_ids(loaded)
    encoded = []
    for prompt in prompts:
        head = _prompt_ids(loaded, prompt)
        for tail in answers:
            encoded.append((head + tail, [0] * len(head) + [1] * len(tail)))
    return encoded


def answer_logits(loaded: LoadedModel, prompts: Sequence[str]) -> Any:
    """Summed log-likelihood of each answer after each prompt, ``[len(prompts), 9]``
    (with gradient when the model trains; wrap in ``torch.no_grad`` to read).

    When every prompt has the same length (the tiny model's fixed grammar), each prompt is
    read once with the nine answers laid after it as a tree (``answer_tree``): one pass of
    prompt + 12 tokens instead of nine sequences; otherwise each prompt + answer is scored as
    a whole sequence. Both give the same numbers (tested)."""
    heads = [_prompt_ids(loaded, p) for p in prompts]
    if len({len(h) for h in heads}) == 1:
        return tree_logits(loaded, heads, _answer_ids(loaded))
    return full_sequence_logits(loaded, prompts)


def full_sequence_logits(loaded: LoadedModel, prompts: Sequence[str]) -> Any:
    """``answer_logits`` by scoring every prompt + answer as one padded sequence."""
    batch = collate(loaded.tokenizer.pad_token_id, encode_choices(loaded, prompts), loaded.device)
    return sequence_logprobs(loaded.model, batch).reshape(len(prompts), len(ANSWERS))


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


def tree_logits(loaded: LoadedModel, heads: list[list[int]], tails: list[list[int]]) -> Any:
    """``answer_logits`` for prompts of one length: one forward pass of each prompt followed
    by the answers' tree (a custom 4-D attention mask and position ids)."""
    import torch

    device, n = loaded.device, len(heads)
    tree = answer_tree(len(heads[0]), tails)
    ids = torch.tensor([head + tree.tokens for head in heads], dtype=torch.long, device=device)
    size = ids.shape[1]
    positions = torch.tensor(tree.positions, dtype=torch.long, device=device).expand(n, size)
    mask = tree.mask.to(device)[None, None].expand(n, 1, size, size)
    logits = loaded.model(input_ids=ids, attention_mask=mask, position_ids=positions).logits
    logp = torch.log_softmax(logits.float(), dim=-1)
    scores = [
        sum(logp[:, row, token] for row, token in zip(rows, tail, strict=True))
        for rows, tail in zip(tree.reads, tails, strict=True)
    ]
    return torch.stack(scores, dim=1)


def answer_probabilities(loaded: LoadedModel, prompts: Sequence[str], batch_size: int = 64) -> Any:
    """The policy over the nine answers for each prompt (numpy ``[n, 9]``), no gradient."""
    import numpy as np
    import torch

    loaded.model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(prompts), batch_size):
            logits = answer_logits(loaded, prompts[start : start + batch_size])
            out.append(torch.softmax(logits, dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, len(ANSWERS)))


def choose_answers(loaded: LoadedModel, prompts: Sequence[str], batch_size: int = 64) -> list[str]:
    """The most likely answer for each prompt (greedy over the nine)."""
    probabilities = answer_probabilities(loaded, prompts, batch_size)
    return [ANSWERS[int(i)] for i in probabilities.argmax(axis=1)]
