"""Plot of the deep-RL agents' training-reward curves."""

from __future__ import annotations

import io
from collections.abc import Sequence

from stocker_core.baselines.drl.store import DrlTrainingResult


def reward_curves_png(results: Sequence[DrlTrainingResult], title: str = "") -> bytes:
    """PNG bytes: mean training-episode reward against timesteps, one line per agent."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5), dpi=100)
    try:
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
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        plt.close(fig)
