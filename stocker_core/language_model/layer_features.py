"""Every layer's hidden states of fixed-length prompts, read out three ways: what a linear probe
reads to tell where a frozen model holds a signal (``bench/bench_probe_features.py``).

For prompts of one token length (the moderator's compact prompt, the tiny model's word
grammar), ``layer_readouts`` runs the prompts through the whole model once, without gradient,
and keeps per layer (the embeddings, then each decoder block's output; the last one after the
final norm, as ``output_hidden_states`` gives it):

- ``last``: the prompt's last position (where the first answer token is read);
- ``mean``: the mean over the prompt's positions;
- ``fields``: the positions whose token differs between the prompts (``varying_positions``:
  the votes' and portfolio fields' values), concatenated in order.

The prompt's positions see only the prompt (the model is causal), so these are the same states
the check's frozen prefix (``language_model.frozen_prefix``) holds at those positions before its answer tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

READOUTS = ("last", "mean", "fields")
CHUNK = 32


def varying_positions(heads: Sequence[Sequence[int]]) -> list[int]:
    """Positions whose token is not the same in every prompt (all of one length)."""
    ids = np.asarray([list(h) for h in heads])
    if ids.ndim != 2:
        raise ValueError("varying_positions needs prompts of one token length")
    return [int(i) for i in np.flatnonzero((ids != ids[:1]).any(axis=0))]


@dataclass
class LayerReadouts:
    """Per readout, ``[layers + 1, n, width]`` float32 (layer 0: the embeddings)."""

    features: dict[str, np.ndarray]
    fields: list[int]
    """The positions ``fields`` concatenates."""

    @property
    def layers(self) -> int:
        """Decoder blocks (the arrays hold one more: the embeddings)."""
        return int(self.features["last"].shape[0]) - 1

    def save(self, folder: Any) -> None:
        from pathlib import Path

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, array in self.features.items():
            np.save(folder / f"{name}.npy", array)
        np.save(folder / "field_positions.npy", np.asarray(self.fields, dtype=np.int64))

    @classmethod
    def load(cls, folder: Any) -> LayerReadouts | None:
        """The readouts saved in ``folder``, or None when any is missing."""
        from pathlib import Path

        folder = Path(folder)
        paths = {name: folder / f"{name}.npy" for name in READOUTS}
        if not all(p.is_file() for p in paths.values()) or not (folder / "field_positions.npy").is_file():
            return None
        features = {name: np.load(p) for name, p in paths.items()}
        return cls(features, [int(i) for i in np.load(folder / "field_positions.npy")])


def layer_readouts(
    model: Any,
    heads: Sequence[Sequence[int]],
    device: Any = "cpu",
    fields: Sequence[int] | None = None,
    chunk: int = CHUNK,
) -> LayerReadouts:
    """The three readouts of every layer for ``heads`` (token ids, all of one length); ``fields``
    defaults to ``varying_positions(heads)``."""
    import torch

    if not heads:
        raise ValueError("no prompts to read")
    if len({len(h) for h in heads}) > 1:
        raise ValueError("layer_readouts needs prompts of one token length")
    fields = list(varying_positions(heads) if fields is None else fields)
    out: dict[str, list[np.ndarray]] = {name: [] for name in READOUTS}
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for first in range(0, len(heads), chunk):
            ids = torch.tensor(
                [list(h) for h in heads[first : first + chunk]], dtype=torch.long, device=device
            )
            hidden = torch.stack(model(input_ids=ids, output_hidden_states=True).hidden_states).float()
            # hidden: [layers + 1, batch, positions, width]
            out["last"].append(hidden[:, :, -1].cpu().numpy())
            out["mean"].append(hidden.mean(dim=2).cpu().numpy())
            picked = hidden[:, :, fields]
            out["fields"].append(picked.reshape(*picked.shape[:2], -1).cpu().numpy())
    model.train(was_training)
    features = {name: np.concatenate(parts, axis=1).astype(np.float32) for name, parts in out.items()}
    return LayerReadouts(features, fields)
