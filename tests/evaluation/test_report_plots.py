"""Report figures and tables that read right: clones named, ≥16 series distinct, legends
outside the data, timing share only for policies that time."""

import numpy as np
import pandas as pd
import pytest

from stocker_core.evaluation import plots
from stocker_core.evaluation.clones import clone_lines, identical_to
from stocker_core.evaluation.report import rolling_clones, rolling_table, timing_table


def _curves(values: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    dates = pd.bdate_range("2020-01-01", periods=len(next(iter(values.values()))))
    for policy, series in values.items():
        for step, (day, value) in enumerate(zip(dates, series, strict=True)):
            rows.append(
                {"policy": policy, "step": step, "date": day, "value": value, "drawdown": 0.0, "close": 1.0}
            )
    return pd.DataFrame(rows)


def test_clones_are_found_by_their_numbers():
    bh = [10_000.0, 10_100.0, 9_950.0]
    curves = _curves(
        {
            "buy_and_hold": bh,
            "a2c": list(bh),
            "macd": [10_000.0, 10_000.0, 10_020.0],
            "moderator_grpo": list(bh),
            "hold": [10_000.0] * 3,
            "ideal": list(bh),  # an upper bound is never called a clone
        }
    )
    clones = identical_to(
        curves, ["step"], ["value"], ["buy_and_hold", "hold", "macd", "a2c", "moderator_grpo", "ideal"]
    )
    assert clones == {"a2c": "buy_and_hold", "moderator_grpo": "buy_and_hold"}
    assert clone_lines(clones, "on every window") == [
        "a2c, moderator_grpo: identical to buy_and_hold on every window"
    ]
    almost = curves.copy()
    almost.loc[(almost["policy"] == "a2c") & (almost["step"] == 2), "value"] += 0.01
    assert identical_to(almost, ["step"], ["value"]) == {"moderator_grpo": "buy_and_hold"}


def test_rolling_clones_need_every_window():
    rows = pd.DataFrame(
        [
            {"ticker": "G", "window_index": w, "policy": p, "final_value": v, "total_reward": r}
            for w in range(3)
            for p, v, r in (
                ("buy_and_hold", 100.0 + w, 1.0),
                ("agent_rl", 90.0, 0.5),
                ("agent_base", 90.0, 0.5),
            )
        ]
    )
    assert rolling_clones(rows) == {"agent_rl": "agent_base"}  # registry order: base first
    rows.loc[(rows["policy"] == "agent_rl") & (rows["window_index"] == 2), "total_reward"] = 0.6
    assert rolling_clones(rows) == {}


def test_sixteen_series_keep_distinct_styles():
    names = ["buy_and_hold", *(f"policy_{i}" for i in range(20))]
    styles = plots.policy_styles(names)
    pairs = {
        (tuple(s["color"]) if not isinstance(s["color"], str) else s["color"], s["linestyle"])
        for s in styles.values()
    }
    assert len(pairs) == len(names)
    assert (
        styles["buy_and_hold"]["color"] == "black" and styles["buy_and_hold"]["lw"] > styles["policy_0"]["lw"]
    )
    colours = [styles[f"policy_{i}"]["color"] for i in range(16)]
    assert len(set(colours)) == 16  # the first 16 differ by colour alone
    greys = [c for c in colours if np.allclose(c[0], c[1]) and np.allclose(c[1], c[2])]
    assert not greys  # no grey that reads as the black baseline


@pytest.mark.parametrize("draw", [plots.equity_png, plots.drawdown_png])
def test_legend_sits_outside_the_data(monkeypatch, draw):
    captured = {}

    def keep(fig, fitted=True):
        fig.canvas.draw()
        captured["fig"] = fig
        return b""

    monkeypatch.setattr(plots, "_png", keep)
    series = {f"policy_{i}": list(10_000.0 + np.arange(30) * i) for i in range(16)}
    series["buy_and_hold"] = list(10_000.0 + np.arange(30) * 3.0)
    curves = _curves(series)
    draw(curves, "t", {"policy_15": "buy_and_hold"} if draw is plots.equity_png else None)
    fig = captured["fig"]
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.get_window_extent(renderer).x1  # right of the plotting area
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    if draw is plots.equity_png:
        assert "buy_and_hold (= policy_15)" in labels and "policy_15" not in labels
    assert len(labels) == len(set(labels))


def test_timing_share_is_left_out_for_a_policy_that_buys_once_and_holds():
    summary = pd.DataFrame(
        [
            {"policy": p, "metric": m, "mean": v, "ci_low": v - 0.01, "ci_high": v + 0.01}
            for p, trades, exposure, share in (
                ("buy_and_hold", 1.0, 0.99, 0.16),
                ("zmr", 6.0, 0.5, 0.74),
                ("late_buyer", 1.0, 0.6, 0.8),  # one buy, mid-window: a timing decision
            )
            for m, v in (
                ("trades", trades),
                ("exposure", exposure),
                ("timing_share", share),
                ("total_return", 0.01),
            )
        ]
    )
    table = rolling_table(summary, pd.DataFrame(columns=["policy", "baseline", "wins", "n", "p_value"]), ())
    shares = dict(zip(table["policy"], table["timing_share"], strict=True))
    assert shares["buy_and_hold"] == "–" and shares["zmr"].startswith("0.74")
    assert shares["late_buyer"].startswith("0.8")
    rolling = pd.DataFrame(
        [
            {"policy": p, "timing_share": s, "ticker": "G", "window_index": 0}
            for p, s in (("buy_and_hold", 0.16), ("zmr", 0.74))
        ]
    )
    timing = timing_table(pd.DataFrame(), rolling, summary)
    row = timing.set_index("policy").loc["buy_and_hold"]
    assert row["windows: mean [CI]"] == "– (buys once and holds: no timing)"


def test_a_clone_gets_no_trades_panel_of_its_own():
    import io

    from PIL import Image

    curves = _curves({"buy_and_hold": [1, 2, 3], "macd": [1, 1, 2], "a2c": [1, 2, 3]}).assign(traded=0.0)
    clones = identical_to(curves, ["step"], ["value"], ["buy_and_hold", "macd", "a2c"])
    assert clones == {"a2c": "buy_and_hold"}
    three = Image.open(io.BytesIO(plots.trades_png(curves, "t")))
    two = Image.open(io.BytesIO(plots.trades_png(curves, "t", clones)))
    # 1.7 in a panel plus 0.6 in of title and axis, at 90 dpi
    assert (three.height, two.height) == (round((1.7 * 3 + 0.6) * 90), round((1.7 * 2 + 0.6) * 90))
