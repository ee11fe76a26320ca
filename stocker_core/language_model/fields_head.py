"""A policy head over the prompt's value positions: how a pretrained model's choice among fixed
answers can be read where its hidden states hold the signal.

Issue 50's probes (docs/results.md, "SmolLM2: where the signal is lost") found the planted
signal readable from SmolLM2's frozen states at the positions that hold the prompt's values
(each vote's digits, the portfolio's fields) at every depth, and faint at the last position,
where the answer tokens are read. A ``FieldsHead`` reads those positions after block
``layer``: each position's state is projected on one direction of its own (``basis``, centred
by ``mean``, scaled by ``scale``: fixed when the head is fitted), and a linear layer turns the
``P`` numbers into one score per answer, normalised into the answers' log-probabilities. The
model is cut after block ``layer`` (``truncate``): the blocks above are never run.

The head lives on the causal LM as the ``fields_head`` submodule (``attach``), so its weights
train, average and checkpoint with the adapter's; it is saved beside the adapter
(``save_head``: ``fields_head.safetensors`` and ``fields_head.json``) and put back by
``language_model.factory.load_with_adapter`` (``load_head``): everything that loads the adapter plays the
head.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

HEAD_NAME = "fields_head"
HEAD_WEIGHTS = "fields_head.safetensors"
HEAD_CONFIG = "fields_head.json"


class FieldsHead(torch.nn.Module):
    """Scores ``answers`` from the hidden states at ``positions`` after block ``layer``."""

    def __init__(self, positions: Sequence[int], width: int, answers: int, layer: int) -> None:
        super().__init__()
        self.layer = int(layer)
        self.register_buffer("positions", torch.tensor(list(positions), dtype=torch.long))
        count = len(positions)
        self.register_buffer("mean", torch.zeros(count, width))
        self.register_buffer("basis", torch.zeros(count, width))
        self.register_buffer("scale", torch.ones(count))
        self.linear = torch.nn.Linear(count, answers)
        torch.nn.init.zeros_(self.linear.weight)
        torch.nn.init.zeros_(self.linear.bias)

    def project(self, hidden: Any) -> Any:
        """``[n, positions]``: each value position's state on its direction, standardised."""
        picked = hidden[:, self.positions].float()
        return ((picked - self.mean) * self.basis).sum(dim=-1) / self.scale

    def forward(self, hidden: Any) -> Any:
        """The answers' log-probabilities ``[n, answers]`` from the states ``[n, tokens, width]``
        after block ``layer``: normalised, as an answer's log-likelihood is bounded, so no
        objective can gain by raising every answer at once (the reward regression's mass term)."""
        return torch.log_softmax(self.linear(self.project(hidden)), dim=-1)

    def describe(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "positions": [int(p) for p in self.positions.tolist()],
            "width": int(self.mean.shape[1]),
            "answers": int(self.linear.out_features),
        }


def fit_projection(head: FieldsHead, states: Any) -> Any:
    """Set each position's direction to the top principal component of its states (``[n, P, W]``
    numpy, every state after block ``layer``) and its scale to the projections' spread; returns
    the projected ``[n, P]`` features."""
    import numpy as np

    states = np.asarray(states, dtype=np.float64)
    mean = states.mean(axis=0)
    basis = np.zeros_like(mean)
    for p in range(states.shape[1]):
        centred = states[:, p] - mean[p]
        basis[p] = np.linalg.svd(centred, full_matrices=False)[2][0]
    projected = ((states - mean) * basis).sum(axis=-1)
    scale = projected.std(axis=0)
    scale[scale < 1e-8] = 1.0
    with torch.no_grad():
        head.mean.copy_(torch.as_tensor(mean, dtype=torch.float32))
        head.basis.copy_(torch.as_tensor(basis, dtype=torch.float32))
        head.scale.copy_(torch.as_tensor(scale, dtype=torch.float32))
    return projected / scale


def set_linear(head: FieldsHead, weight: Any, bias: Any) -> None:
    """The linear layer's weights (``[answers, P]``, ``[answers]``, numpy)."""
    with torch.no_grad():
        head.linear.weight.copy_(torch.as_tensor(weight, dtype=torch.float32))
        head.linear.bias.copy_(torch.as_tensor(bias, dtype=torch.float32))


def causal_lm(model: Any) -> Any:
    """The causal LM under any PEFT wrapping."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def head_of(model: Any) -> FieldsHead | None:
    """The model's fields head, or None when its answers are read from the answer tokens."""
    return getattr(causal_lm(model), HEAD_NAME, None)


def attach(model: Any, head: FieldsHead, trainable: bool) -> None:
    """Put ``head`` on the model (its weights train with the adapter's when ``trainable``)."""
    head.linear.requires_grad_(trainable)
    setattr(causal_lm(model), HEAD_NAME, head.to(next(model.parameters()).device))


def truncate(model: Any, layer: int) -> None:
    """Keep the decoder's first ``layer`` blocks (the head reads their output; the blocks above,
    the final norm's input, are never run)."""
    decoder = causal_lm(model).model
    total = len(decoder.layers)
    if not 1 <= layer <= total:
        raise ValueError(f"a fields head reads after block 1..{total}, not {layer}")
    decoder.layers = decoder.layers[:layer]
    config = causal_lm(model).config
    config.num_hidden_layers = layer
    if isinstance(getattr(config, "layer_types", None), list):
        config.layer_types = config.layer_types[:layer]


def prompt_states(model: Any, ids: Any) -> Any:
    """The output of the model's last decoder block at every position of ``ids`` (``[n, T]``,
    one length), before the final norm: what the head reads (with gradient when training)."""
    decoder = causal_lm(model).model
    captured: list[Any] = []

    def keep(_module: Any, _inputs: Any, output: Any) -> None:
        captured.append(output[0] if isinstance(output, tuple) else output)

    hook = decoder.layers[-1].register_forward_hook(keep)
    try:
        decoder(input_ids=ids)
    finally:
        hook.remove()
    return captured[-1]


def save_head(model: Any, folder: Path) -> None:
    """Write the model's head beside its adapter (nothing when it has none)."""
    from safetensors.torch import save_file

    head = head_of(model)
    if head is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().cpu().contiguous() for k, v in head.state_dict().items()}
    save_file(tensors, str(folder / HEAD_WEIGHTS))
    (folder / HEAD_CONFIG).write_text(json.dumps(head.describe(), indent=2))


def saved_layer(folder: Path) -> int | None:
    """The block after which a head saved in ``folder`` reads (None: no head there)."""
    path = folder / HEAD_CONFIG
    return int(json.loads(path.read_text())["layer"]) if path.is_file() else None


def load_head(model: Any, folder: Path, trainable: bool) -> FieldsHead:
    """The head saved in ``folder``, attached to ``model`` (already ``truncate``d to its layer)."""
    from safetensors.torch import load_file

    described = json.loads((folder / HEAD_CONFIG).read_text())
    head = FieldsHead(described["positions"], described["width"], described["answers"], described["layer"])
    head.load_state_dict(load_file(str(folder / HEAD_WEIGHTS)))
    attach(model, head, trainable)
    return head
