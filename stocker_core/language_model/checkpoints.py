"""In-memory checkpoints of a model's trainable weights and what a training stage returns:
shared by the moderator's fits and the agent's (the language-model floor, below both)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def trainable_state(model: Any) -> dict[str, Any]:
    """A detached copy of the trainable weights (a checkpoint kept in memory)."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def restore_trainable(model: Any, state: dict[str, Any]) -> None:
    """Copy a ``trainable_state`` back into ``model``."""
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name in state:
                parameter.copy_(state[name])


def trainable_parameters(model: Any) -> int:
    """How many weights train (the adapter's, plus any module trained in full)."""
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))


@dataclass
class StageResult:
    """A trained adapter: where it is, its log, how long it took."""

    adapter_dir: Path
    log: Any
    """The stage's log (``runtime.StageLog`` or ``policy_gradient.PgLog``)."""
    wall_seconds: float
    steps: int
    fit: Any = None
    """The fit's result (valid curve, kept step) of a reward-table fit."""
    details: dict[str, Any] = field(default_factory=dict)
    """What else the stage chose (a fields head's layer and ridge penalty), for its report."""
