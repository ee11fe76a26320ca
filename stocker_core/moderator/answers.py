"""The moderator's decision as scored choices: a distribution over its nine answers.

Every answer (``hold q0``, ``buy q1``..``q4``, ``sell q1``..``q4``) is scored by the
model's log-likelihood of the answer and ``<eos>`` after the prompt; the policy is the
softmax over the nine. Reading a decision this way cannot fail to parse, and the same
numbers train the policy (``grpo``: the exact expected gradient over the nine answers).

The scoring is the language-model floor's (``stocker_core.language_model.choices``); this module binds
the moderator's answers and how its prompts and answers are tokenized.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stocker_core.language_model import choices
from stocker_core.language_model.factory import LoadedModel
from stocker_core.moderator.prompts import QUARTERS, completion_for

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
    (with gradient when the model trains; wrap in ``torch.no_grad`` to read). A model with a
    fields head (``language_model.fields_head``) is scored by the head over the prompts' value positions.

    When every prompt has the same length (the tiny model's fixed grammar), each prompt is
    read once with the nine answers laid after it as a tree (``language_model.choices.answer_tree``):
    one pass of prompt + 12 tokens instead of nine sequences; otherwise each prompt + answer
    is scored as a whole sequence. Both give the same numbers (tested)."""
    heads = [_prompt_ids(loaded, p) for p in prompts]
    if fields_head_of(loaded.model) is not None:
        return _head_scores(loaded, heads)
    pad = loaded.tokenizer.pad_token_id
    return choices.answer_logits(loaded.model, heads, _answer_ids(loaded), pad, loaded.device)


def fields_head_of(model: Any) -> Any:
    """The model's fields head (``language_model.fields_head``), None when it reads the answer tokens."""
    from stocker_core.language_model.fields_head import head_of

    return head_of(model)


def _head_scores(loaded: LoadedModel, heads: Sequence[Sequence[int]]) -> Any:
    """The nine answers' scores from the fields head over the prompts' value positions."""
    import torch

    from stocker_core.language_model.fields_head import prompt_states

    if len({len(h) for h in heads}) > 1:
        raise ValueError("a fields head reads prompts of one token length (the compact prompt)")
    ids = torch.tensor([list(h) for h in heads], dtype=torch.long, device=loaded.device)
    return fields_head_of(loaded.model)(prompt_states(loaded.model, ids))


def frozen_prefix(loaded: LoadedModel, prompts: Sequence[str]) -> Any:
    """The prompts' frozen lower blocks computed once (``language_model.frozen_prefix``) when the model is
    adapted in its top blocks only and every prompt has one length; None otherwise."""
    from stocker_core.language_model.frozen_prefix import frozen_prefix as build

    heads = [_prompt_ids(loaded, p) for p in prompts]
    return build(loaded.model, heads, _answer_ids(loaded), loaded.device)


def full_sequence_logits(loaded: LoadedModel, prompts: Sequence[str]) -> Any:
    """``answer_logits`` by scoring every prompt + answer as one padded sequence."""
    heads = [_prompt_ids(loaded, p) for p in prompts]
    pad = loaded.tokenizer.pad_token_id
    return choices.full_sequence_logits(loaded.model, heads, _answer_ids(loaded), pad, loaded.device)


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


SIDE_ANSWERS = ("hold q0", "buy q4", "sell q4")
"""What ``decode: side`` answers: the full move of the side the policy leans to."""


SIDE_COLUMNS = tuple(ANSWERS.index(a) for a in SIDE_ANSWERS)
"""Where each side's full move sits in ``ANSWERS``: its reward is the side's reward."""


def side_logits(logits: Any) -> Any:
    """``[n, 3]`` log-likelihoods of the three sides from the nine answers' ``[n, 9]``: hold,
    the four buys together, the four sells together (a log-sum-exp within each side)."""
    import torch

    buys, sells = torch.logsumexp(logits[:, 1:5], dim=-1), torch.logsumexp(logits[:, 5:9], dim=-1)
    return torch.stack([logits[:, 0], buys, sells], dim=-1)


def decided_indices(probabilities: Any, by_side: bool = False) -> Any:
    """Index into ``ANSWERS`` of each row's decision: the most likely answer, or with
    ``by_side`` the full move of the most likely side (hold, the four buys together, the four
    sells together)."""
    import numpy as np

    if not by_side:
        return probabilities.argmax(axis=1)
    sides = np.stack(
        [probabilities[:, 0], probabilities[:, 1:5].sum(axis=1), probabilities[:, 5:9].sum(axis=1)], axis=1
    )
    full = np.array([ANSWERS.index(a) for a in SIDE_ANSWERS])
    return full[sides.argmax(axis=1)]


def choose_answers(
    loaded: LoadedModel, prompts: Sequence[str], batch_size: int = 64, by_side: bool = False
) -> list[str]:
    """Each prompt's decision over the nine answers (``decided_indices``)."""
    probabilities = answer_probabilities(loaded, prompts, batch_size)
    return [ANSWERS[int(i)] for i in decided_indices(probabilities, by_side)]
