"""Traces as token sequences for training: ids plus a mask of the tokens the model wrote
(only those are learned from; task text and tool answers are context)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stocker_core.agent.model import TINY_CONTEXT, trace_segments
from stocker_core.agent.trace import Trace
from stocker_core.training.models import LoadedModel


@dataclass
class Batch:
    """Right-padded ids, attention mask and the mask of learned tokens."""

    input_ids: Any
    attention_mask: Any
    learn_mask: Any


def encode_trace(
    loaded: LoadedModel,
    trace: Trace,
    tools: list[dict[str, Any]],
    max_calls: int,
    max_len: int = TINY_CONTEXT,
) -> tuple[list[int], list[int]]:
    """(ids, learn mask) of ``trace``; words style starts with ``<bos>``."""
    tokenizer = loaded.tokenizer
    ids: list[int] = [tokenizer.bos_token_id] if loaded.prompt_style == "words" else []
    mask: list[int] = [0] * len(ids)
    for segment in trace_segments(loaded, trace, tools, max_calls):
        piece = tokenizer(segment.text, add_special_tokens=False)["input_ids"]
        ids += piece
        mask += [int(segment.trainable)] * len(piece)
    return ids[:max_len], mask[:max_len]


def collate(loaded: LoadedModel, encoded: Sequence[tuple[list[int], list[int]]]) -> Batch:
    """Pad encoded traces on the right into tensors on the model's device."""
    import torch

    width = max(len(ids) for ids, _ in encoded)
    pad = loaded.tokenizer.pad_token_id
    ids = torch.full((len(encoded), width), pad, dtype=torch.long)
    attention = torch.zeros((len(encoded), width), dtype=torch.long)
    learn = torch.zeros((len(encoded), width), dtype=torch.float32)
    for row, (seq, mask) in enumerate(encoded):
        ids[row, : len(seq)] = torch.tensor(seq)
        attention[row, : len(seq)] = 1
        learn[row, : len(seq)] = torch.tensor(mask, dtype=torch.float32)
    device = loaded.device
    return Batch(ids.to(device), attention.to(device), learn.to(device))


def token_logprobs(model: Any, batch: Batch) -> tuple[Any, Any]:
    """Log-probabilities of each next token and the matching learn mask (both [B, T-1])."""
    import torch

    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    targets = batch.input_ids[:, 1:]
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return logp, batch.learn_mask[:, 1:]
