"""Scoring fixed answers after fixed prompts when only the top blocks train: the frozen lower
blocks' outputs are computed once and reused for every step and epoch.

A pretrained model adapted with LoRA on its last ``k`` decoder blocks only
(``lora.LoraSpec(layers=k)``) computes exactly the same activations below those
blocks at every step: the prompts (training states) and the answers are fixed, and nothing
under the adapted blocks trains. ``FrozenPrefix.build`` runs every prompt, with the answers
laid after it as a tree (``choices.answer_tree``), through the frozen blocks once
(no gradient) and keeps the hidden states entering the first adapted block;
``FrozenPrefix.logits`` then runs only the adapted blocks, the final norm and the output head
(at the rows that score an answer token: the prompt's own positions need no logits) — the
same numbers as ``choices.answer_logits`` on the whole model (tested), at a fraction of the
cost (``bench/bench_pretrained_moderator.py``).

Usable when every prompt has the same token count (the moderator's compact prompt) and the
model is a Llama-like decoder (``model.model.layers``, ``norm``, ``rotary_emb``) whose
trainable weights all sit in its top blocks (``adapted_from``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stocker_core.language_model.choices import AnswerTree, answer_tree

CHUNK = 64
"""Prompts per pass through the frozen blocks while building the cache."""


def decoder_parts(model: Any) -> tuple[Any, Any] | None:
    """(the causal LM, its decoder stack) under any PEFT wrapping, or None when the model is
    not a Llama-like decoder with ``model.layers``, ``norm`` and ``rotary_emb``."""
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    decoder = getattr(causal, "model", None)
    if decoder is None or not all(hasattr(decoder, a) for a in ("layers", "norm", "rotary_emb")):
        return None
    if not hasattr(causal, "lm_head"):
        return None
    return causal, decoder


def adapted_from(model: Any) -> int | None:
    """Index of the lowest decoder block holding a trainable weight, when every trainable
    weight sits in the decoder blocks or a fields head (None otherwise: embeddings or the output
    head train, or nothing does, or the model is not a Llama-like decoder). Blocks below it are
    frozen."""
    parts = decoder_parts(model)
    if parts is None:
        return None
    _, decoder = parts
    lowest = None
    in_layers = 0
    for index, layer in enumerate(decoder.layers):
        trainable = [p for p in layer.parameters() if p.requires_grad]
        if trainable:
            lowest = index if lowest is None else lowest
            in_layers += sum(p.numel() for p in trainable)
    from stocker_core.language_model.fields_head import head_of

    head = head_of(model)  # a fields head reads the top block's output: it trains above the blocks
    outside = {id(p) for p in head.parameters()} if head is not None else set()
    total = sum(p.numel() for p in model.parameters() if p.requires_grad and id(p) not in outside)
    if lowest is None or total != in_layers:
        return None
    return lowest


def _tree_inputs(heads: Sequence[Sequence[int]], tree: AnswerTree, device: Any) -> tuple[Any, Any, Any]:
    import torch

    n = len(heads)
    ids = torch.tensor([list(h) + tree.tokens for h in heads], dtype=torch.long, device=device)
    size = ids.shape[1]
    positions = torch.tensor(tree.positions, dtype=torch.long, device=device).expand(n, size)
    mask = tree.mask.to(device)[None, None].expand(n, 1, size, size)
    return ids, positions, mask


def _run_blocks(decoder: Any, layers: Sequence[Any], hidden: Any, positions: Any, mask: Any) -> Any:
    """``hidden`` through ``layers`` with the tree's mask and positions (as ``LlamaModel.forward``
    prepares them)."""
    from transformers.masking_utils import create_causal_mask

    causal = create_causal_mask(
        config=decoder.config,
        inputs_embeds=hidden,
        attention_mask=mask,
        cache=None,
        position_ids=positions,
    )
    rotary = decoder.rotary_emb(hidden, position_ids=positions)
    for layer in layers:
        hidden = layer(hidden, attention_mask=causal, position_embeddings=rotary, position_ids=positions)
        if isinstance(hidden, tuple):  # older decoder layers return a tuple
            hidden = hidden[0]
    return hidden


@dataclass
class FrozenPrefix:
    """Hidden states entering block ``start`` for every prompt + answer tree (``[n, size, H]``,
    on the CPU or the model's device), and how to read the answers from the top."""

    hidden: Any
    tree: AnswerTree
    tails: list[list[int]]
    start: int

    @classmethod
    def build(
        cls,
        model: Any,
        heads: Sequence[Sequence[int]],
        tails: Sequence[Sequence[int]],
        start: int,
        device: Any,
        chunk: int = CHUNK,
    ) -> FrozenPrefix:
        """Run ``heads`` (all of one length) with the answers' tree through blocks ``0 .. start-1``
        once, without gradient."""
        import torch

        if len({len(h) for h in heads}) > 1:
            raise ValueError("a frozen prefix needs prompts of one token length")
        parts = decoder_parts(model)
        if parts is None:
            raise ValueError("a frozen prefix needs a Llama-like decoder (model.layers, norm, rotary_emb)")
        _, decoder = parts
        tree = answer_tree(len(heads[0]), tails)
        lower = list(decoder.layers[:start])
        out = []
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for first in range(0, len(heads), chunk):
                ids, positions, mask = _tree_inputs(heads[first : first + chunk], tree, device)
                hidden = decoder.embed_tokens(ids)
                out.append(_run_blocks(decoder, lower, hidden, positions, mask))
        model.train(was_training)
        hidden = torch.cat(out) if out else torch.zeros(0)
        return cls(hidden, tree, [list(t) for t in tails], start)

    def __len__(self) -> int:
        return int(self.hidden.shape[0])

    def top_states(self, model: Any, index: Sequence[int] | Any) -> Any:
        """The hidden states leaving the last decoder block (before the final norm) for the
        prompts at ``index``, every position of prompt + answer tree, ``[len(index), size, H]``:
        the adapted blocks only (with gradient when the model trains)."""
        import torch

        _, decoder = decoder_parts(model)  # type: ignore[misc]
        index = torch.as_tensor(index, dtype=torch.long)
        hidden = self.hidden[index]
        n, size = hidden.shape[0], hidden.shape[1]
        device = next(decoder.layers[self.start].parameters()).device
        hidden = hidden.to(device)
        positions = torch.tensor(self.tree.positions, dtype=torch.long, device=device).expand(n, size)
        mask = self.tree.mask.to(device)[None, None].expand(n, 1, size, size)
        return _run_blocks(decoder, list(decoder.layers[self.start :]), hidden, positions, mask)

    def logits(self, model: Any, index: Sequence[int] | Any, states: Any = None) -> Any:
        """Summed log-likelihood of each answer after the prompts at ``index``,
        ``[len(index), len(tails)]``: the adapted blocks, the norm and the head only (with
        gradient when the model trains); ``states`` reuses ``top_states(model, index)``. A model
        with a fields head scores the answers with it instead (``language_model.fields_head``)."""
        import torch

        from stocker_core.language_model.fields_head import head_of

        causal, decoder = decoder_parts(model)  # type: ignore[misc]
        hidden = self.top_states(model, index) if states is None else states
        head = head_of(model)
        if head is not None:
            return head(hidden)
        rows = sorted({row for reads in self.tree.reads for row in reads})
        where = {row: i for i, row in enumerate(rows)}
        picked = decoder.norm(hidden[:, rows])
        logp = torch.log_softmax(causal.lm_head(picked).float(), dim=-1)
        scores = [
            sum(logp[:, where[row], token] for row, token in zip(reads, tail, strict=True))
            for reads, tail in zip(self.tree.reads, self.tails, strict=True)
        ]
        return torch.stack(scores, dim=1)

    def probabilities(self, model: Any, batch: int = 256) -> Any:
        """The softmax over the answers for every cached prompt (numpy ``[n, answers]``), no gradient."""
        import numpy as np
        import torch

        out = []
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for first in range(0, len(self), batch):
                index = range(first, min(first + batch, len(self)))
                out.append(torch.softmax(self.logits(model, list(index)), dim=-1).cpu().numpy())
        model.train(was_training)
        return np.concatenate(out) if out else np.zeros((0, len(self.tails)))


_BUILT: dict[tuple, FrozenPrefix] = {}
KEEP = 4
"""Frozen prefixes kept in memory per process (the train and valid states of the SFT stage,
reused by the RL stage that continues it on the same base)."""


def _lower_fingerprint(model: Any, start: int) -> tuple:
    _, decoder = decoder_parts(model)  # type: ignore[misc]
    weights = [p for p in decoder.layers[start - 1].parameters()][:2] + [decoder.embed_tokens.weight]
    return tuple(float(w.detach().double().sum()) for w in weights)


def frozen_prefix(
    model: Any, heads: Sequence[Sequence[int]], tails: Sequence[Sequence[int]], device: Any
) -> FrozenPrefix | None:
    """The prompts' ``FrozenPrefix`` when it applies (a decoder adapted in its top blocks only,
    prompts of one length), built once per process for the same frozen weights, prompts and
    answers; None when it does not apply (then score with the whole model)."""
    start = adapted_from(model)
    if not start or not heads or len({len(h) for h in heads}) > 1:
        return None
    key = (
        start,
        len(decoder_parts(model)[1].layers),  # type: ignore[index]
        _lower_fingerprint(model, start),
        hash(tuple(tuple(h) for h in heads)),
        tuple(tuple(t) for t in tails),
    )
    if key not in _BUILT:
        while len(_BUILT) >= KEEP:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[key] = FrozenPrefix.build(model, heads, tails, start, device)
    return _BUILT[key]
