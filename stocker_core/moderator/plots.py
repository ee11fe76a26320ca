"""The training curve of a stage as a PNG (loss for SFT, mean reward for GRPO)."""

from __future__ import annotations

from collections.abc import Sequence

from stocker_core.figures import figure_png, subplots


def curve_png(points: Sequence[tuple[int, float]], title: str, ylabel: str) -> bytes:
    """A small line plot of (step, value) points; an empty plot says there is nothing logged."""
    fig, ax = subplots(figsize=(6, 3.2), dpi=100)
    if points:
        steps, values = zip(*points, strict=True)
        ax.plot(steps, values, marker="o", markersize=2.5, linewidth=1.2)
    else:
        ax.text(0.5, 0.5, "nothing logged", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return figure_png(fig)
