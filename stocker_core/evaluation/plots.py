"""Report figures as PNG bytes (matplotlib, Agg): equity, drawdown, trades on price, rolling CIs."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from stocker_core.env.policies import is_upper_bound

BASELINE = "buy_and_hold"


def _figure(height: float = 3.6, width: float = 9.0, rows: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, 1, figsize=(width, height), squeeze=False, sharex=rows > 1)
    return plt, fig, axes[:, 0]


def _png(plt, fig) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def _days(curve: pd.DataFrame) -> pd.DataFrame:
    """Rows after V_0 (the ones with a date)."""
    return curve.loc[curve["step"] > 0]


def equity_png(curves: pd.DataFrame, title: str) -> bytes:
    """Each policy's portfolio value against buy-and-hold (hindsight upper bounds left out)."""
    plt, fig, (ax,) = _figure()
    for policy, curve in curves.groupby("policy", sort=False):
        if is_upper_bound(str(policy)):
            continue
        days = _days(curve)
        bold = policy == BASELINE
        ax.plot(
            pd.to_datetime(days["date"]),
            days["value"],
            label=str(policy),
            lw=2.4 if bold else 1.2,
            color="black" if bold else None,
            zorder=3 if bold else 2,
        )
    ax.set_title(title)
    ax.set_ylabel("portfolio value")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=4)
    return _png(plt, fig)


def drawdown_png(curves: pd.DataFrame, title: str) -> bytes:
    """Each policy's drawdown from its running peak (as a negative fraction)."""
    plt, fig, (ax,) = _figure(3.0)
    for policy, curve in curves.groupby("policy", sort=False):
        if is_upper_bound(str(policy)):
            continue
        days = _days(curve)
        bold = policy == BASELINE
        ax.plot(
            pd.to_datetime(days["date"]),
            -days["drawdown"],
            label=str(policy),
            lw=2.0 if bold else 1.0,
            color="black" if bold else None,
        )
    ax.set_title(title)
    ax.set_ylabel("drawdown")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=4)
    return _png(plt, fig)


def trades_png(curves: pd.DataFrame, title: str) -> bytes:
    """One panel per policy: the close with its buys (▲) and sells (▼)."""
    policies = list(dict.fromkeys(curves["policy"]))
    plt, fig, axes = _figure(1.7 * max(1, len(policies)) + 0.6, rows=max(1, len(policies)))
    for ax, policy in zip(axes, policies, strict=False):
        days = _days(curves.loc[curves["policy"] == policy])
        dates = pd.to_datetime(days["date"])
        ax.plot(dates, days["close"], color="0.4", lw=0.9)
        buys, sells = days["traded"] > 0, days["traded"] < 0
        ax.scatter(dates[buys], days["close"][buys], marker="^", color="tab:green", s=22, zorder=3)
        ax.scatter(dates[sells], days["close"][sells], marker="v", color="tab:red", s=22, zorder=3)
        label = f"{policy} (hindsight upper bound)" if is_upper_bound(str(policy)) else str(policy)
        ax.set_title(f"{label}: {int(buys.sum())} buys, {int(sells.sum())} sells", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    return _png(plt, fig)


def rolling_ci_png(summary: pd.DataFrame, metric: str, title: str) -> bytes:
    """Mean of ``metric`` over rolling windows with its confidence interval, per policy."""
    rows = summary.loc[summary["metric"] == metric].reset_index(drop=True)
    plt, fig, (ax,) = _figure(0.45 * max(len(rows), 2) + 1.2)
    y = np.arange(len(rows))
    means = rows["mean"].astype(float).to_numpy()
    low = (means - rows["ci_low"].astype(float).fillna(rows["mean"]).to_numpy()).clip(min=0)
    high = (rows["ci_high"].astype(float).fillna(rows["mean"]).to_numpy() - means).clip(min=0)
    ax.errorbar(means, y, xerr=[low, high], fmt="o", color="tab:blue", capsize=3)
    ax.set_yticks(y, rows["label"].tolist())
    ax.axvline(0.0, color="0.5", lw=0.8)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="x")
    return _png(plt, fig)
