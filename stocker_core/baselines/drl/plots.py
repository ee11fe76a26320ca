"""Plot of the deep-RL agents' training-reward curves."""

from __future__ import annotations

from collections.abc import Sequence

from stocker_core.baselines.drl.store import DrlTrainingResult
from stocker_core.figures import figure_png, subplots


def reward_curves_png(results: Sequence[DrlTrainingResult], title: str = "") -> bytes:
    """PNG bytes: mean training-episode reward against timesteps, one line per agent."""
    fig, ax = subplots(figsize=(8, 3.5), dpi=100)
    for result in results:
        if result.reward_curve:
            steps, rewards = zip(*result.reward_curve, strict=True)
            ax.plot(steps, rewards, marker=".", linewidth=1.2, label=result.algo)
    ax.set_xlabel("training timesteps")
    ax.set_ylabel("mean episode reward")
    ax.set_title(title or "deep-RL training reward")
    ax.grid(alpha=0.3)
    if any(r.reward_curve for r in results):
        ax.legend(loc="best", fontsize=8)
    return figure_png(fig)
