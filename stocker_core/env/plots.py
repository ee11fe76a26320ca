"""Plots of episodes: price with the ideal position shaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stocker_core.figures import figure_png, subplots


def ideal_position_png(
    dates: Sequence[object],
    closes: Sequence[float] | np.ndarray,
    long: Sequence[bool] | np.ndarray,
    title: str = "",
    greedy_long: Sequence[bool] | np.ndarray | None = None,
) -> bytes:
    """PNG bytes: close price line, days the ideal path is long shaded green
    (and the greedy rule's long days as ticks when given)."""
    x = np.arange(len(closes))
    px = np.asarray(closes, dtype=float)
    fig, ax = subplots(figsize=(9, 4), dpi=100)
    ax.plot(x, px, color="black", linewidth=1.2, label="close")
    lng = np.asarray(long, dtype=bool)
    # long after step t means exposed from close t to close t+1: shade that span
    for i, held in enumerate(lng):
        if held:
            ax.axvspan(
                i,
                min(i + 1, len(x) - 1) if i + 1 < len(x) else i + 0.5,
                color="tab:green",
                alpha=0.25,
                lw=0,
                label="ideal: long" if i == int(np.argmax(lng)) else None,
            )
    if greedy_long is not None:
        g = np.asarray(greedy_long, dtype=bool)
        ax.scatter(x[g] + 0.5, np.full(g.sum(), px.min()), marker="|", color="tab:blue", label="greedy: long")
    step = max(1, len(x) // 8)
    ax.set_xticks(x[::step])
    ax.set_xticklabels([str(d)[:10] for d in list(dates)[::step]], rotation=30, fontsize=8)
    ax.set_ylabel("close")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=8)
    return figure_png(fig)
