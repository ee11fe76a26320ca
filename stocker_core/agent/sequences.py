"""Traces as token sequences for training: ids plus a mask of the tokens the model wrote
(only those are learned from; task text and tool answers are context)."""

from __future__ import annotations

from typing import Any

from stocker_core.agent.model import TINY_CONTEXT, trace_segments
from stocker_core.agent.trace import Trace
from stocker_core.language_model.factory import LoadedModel


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
