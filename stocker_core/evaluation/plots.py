"""Report figures as PNG bytes (matplotlib, Agg): equity, drawdown, trades on price, rolling CIs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stocker_core.env.policies import is_upper_bound
from stocker_core.figures import figure_png, subplots

BASELINE = "buy_and_hold"


def _figure(height: float = 3.6, width: float = 9.0, rows: int = 1):
    fig, axes = subplots(rows, 1, figsize=(width, height), squeeze=False, sharex=rows > 1)
    return fig, axes[:, 0]


def _png(fig, fitted: bool = True) -> bytes:
    """A report figure as PNG bytes (90 dpi, cropped so a legend placed outside the axes stays
    in the picture); ``fitted=False`` for a figure whose layout is already set (laying out and
    cropping a tall grid of panels measures every tick label twice)."""
    return figure_png(fig, dpi=90, fitted=fitted, crop=fitted)


# 18 distinct colours (tab20 without its greys, which read as the black baseline; its 9 dark
# hues first), then the same again dashed: 36 series stay told apart; the baseline is black.
_DASHES = ("-", "--", ":")


def _palette() -> list[tuple[float, float, float]]:
    from matplotlib import colormaps

    colours = colormaps["tab20"].colors  # pairs of a dark and a light shade of 10 hues
    dark = [c for i, c in enumerate(colours) if i % 2 == 0 and i != 14]
    light = [c for i, c in enumerate(colours) if i % 2 == 1 and i != 15]
    return dark + light  # 9 different hues first, then their light shades


def policy_styles(policies: list[str]) -> dict[str, dict[str, object]]:
    """Colour, line style and width per policy, stable across a report's figures:
    the baseline black and thick, every other policy its own colour / dash pair."""
    styles: dict[str, dict[str, object]] = {}
    palette = _palette()
    others = [p for p in policies if p != BASELINE]
    for index, policy in enumerate(others):
        styles[policy] = {
            "color": palette[index % len(palette)],
            "linestyle": _DASHES[(index // len(palette)) % len(_DASHES)],
            "lw": 1.2,
            "zorder": 2,
        }
    styles[BASELINE] = {"color": "black", "linestyle": "-", "lw": 2.4, "zorder": 3}
    return styles


def _legend_outside(ax) -> None:
    """The legend right of the axes, one entry a line, so it never covers a curve."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0.0)


def _curve_labels(curves: pd.DataFrame, clones: dict[str, str] | None) -> tuple[list[str], dict[str, str]]:
    """(policies drawn, label per policy): a clone is not drawn; its original's label names it."""
    clones = clones or {}
    drawn = [
        str(p) for p in dict.fromkeys(curves["policy"]) if not is_upper_bound(str(p)) and str(p) not in clones
    ]
    labels = {}
    for policy in drawn:
        same = [c for c, o in clones.items() if o == policy]
        labels[policy] = f"{policy} (= {', '.join(same)})" if same else policy
    return drawn, labels


def _days(curve: pd.DataFrame) -> pd.DataFrame:
    """Rows after V_0 (the ones with a date)."""
    return curve.loc[curve["step"] > 0]


def equity_png(curves: pd.DataFrame, title: str, clones: dict[str, str] | None = None) -> bytes:
    """Each policy's portfolio value against buy-and-hold (hindsight upper bounds left out;
    a policy identical to another, ``clones``, drawn once under the other's label)."""
    fig, (ax,) = _figure(width=11.0)
    drawn, labels = _curve_labels(curves, clones)
    styles = policy_styles(drawn)
    for policy in drawn:
        days = _days(curves.loc[curves["policy"] == policy])
        ax.plot(pd.to_datetime(days["date"]), days["value"], label=labels[policy], **styles[policy])
    ax.set_title(title)
    ax.set_ylabel("portfolio value")
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return _png(fig)


def drawdown_png(curves: pd.DataFrame, title: str, clones: dict[str, str] | None = None) -> bytes:
    """Each policy's drawdown from its running peak (as a negative fraction)."""
    fig, (ax,) = _figure(3.0, width=11.0)
    drawn, labels = _curve_labels(curves, clones)
    styles = policy_styles(drawn)
    for policy in drawn:
        days = _days(curves.loc[curves["policy"] == policy])
        style = {**styles[policy], "lw": 2.0 if policy == BASELINE else 1.0}
        ax.plot(pd.to_datetime(days["date"]), -days["drawdown"], label=labels[policy], **style)
    ax.set_title(title)
    ax.set_ylabel("drawdown")
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return _png(fig)


def trades_png(curves: pd.DataFrame, title: str, clones: dict[str, str] | None = None) -> bytes:
    """One panel per policy: the close with its buys (▲) and sells (▼); a policy identical to
    another, ``clones``, gets no panel of its own: its original's title names it."""
    clones = clones or {}
    policies = [p for p in dict.fromkeys(curves["policy"]) if p not in clones]
    height = 1.7 * max(1, len(policies)) + 0.6
    fig, axes = _figure(height, rows=max(1, len(policies)))
    # a fixed layout in inches: 0.8 in above the first panel (suptitle and the panel's
    # title), 0.45 in for the shared date axis below the last, 0.35 in between panels
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.8 / height, bottom=0.45 / height, hspace=0.35 / 1.35)
    for ax, policy in zip(axes, policies, strict=False):
        days = _days(curves.loc[curves["policy"] == policy])
        dates = pd.to_datetime(days["date"])
        ax.plot(dates, days["close"], color="0.4", lw=0.9)
        buys, sells = days["traded"] > 0, days["traded"] < 0
        ax.scatter(dates[buys], days["close"][buys], marker="^", color="tab:green", s=22, zorder=3)
        ax.scatter(dates[sells], days["close"][sells], marker="v", color="tab:red", s=22, zorder=3)
        label = f"{policy} (hindsight upper bound)" if is_upper_bound(str(policy)) else str(policy)
        same = [c for c, o in clones.items() if o == policy]
        label += f" (= {', '.join(same)})" if same else ""
        ax.set_title(f"{label}: {int(buys.sum())} buys, {int(sells.sum())} sells", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    fig.suptitle(title, y=1 - 0.15 / height, va="top")
    return _png(fig, fitted=False)


def rolling_ci_png(summary: pd.DataFrame, metric: str, title: str) -> bytes:
    """Mean of ``metric`` over rolling windows with its confidence interval, per policy."""
    rows = summary.loc[summary["metric"] == metric].reset_index(drop=True)
    fig, (ax,) = _figure(0.45 * max(len(rows), 2) + 1.2)
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
    return _png(fig)
