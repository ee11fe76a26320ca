"""The validation curves of the agent's training as a PNG (result, format, tool scores)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stocker_core.figures import figure_png, subplots


def curves_png(points: Sequence[dict[str, Any]], title: str) -> bytes:
    """Held-out result / format / tool scores against the RL step (step 0 = warm start)."""
    fig, ax = subplots(figsize=(7.5, 3.6), dpi=100)
    steps = [p["step"] for p in points]
    for name, style in (("result", "o-"), ("format", "s--"), ("tool", "^:")):
        ax.plot(steps, [p[name] for p in points], style, label=f"{name} score")
    ax.set_xlabel("RL step (0 = after the warm start)")
    ax.set_ylabel("mean score on the valid split")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title, fontsize=10)
    return figure_png(fig)
