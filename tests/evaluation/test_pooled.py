"""The report's pooled evidence from eval.rolling rows and test-period curves, by hand."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from stocker_core.evaluation.clones import window_clones
from stocker_core.evaluation.pooled import (
    EvidenceConfig,
    _fmt_ci,
    headline,
    leaderboard_table,
    period_paths,
    pooled_evidence,
)

FAST = EvidenceConfig(reps=500, random_policies=200)


def _rows(diffs: dict[str, list[float]], bh_sharpe: list[float]) -> pd.DataFrame:
    """Disjoint 5-day windows, two a ticker; each policy's Sharpe = buy-and-hold's + its diff."""
    rows, n = [], len(bh_sharpe)
    for i in range(n):
        ticker, index = ("AAA", "BBB")[i % 2], i // 2
        start = pd.Timestamp("2020-01-06") + pd.Timedelta(weeks=2 * index)
        base = {
            "ticker": ticker,
            "window_index": index,
            "start_date": start,
            "end_date": start + pd.Timedelta(days=4),
        }
        rows.append(
            {
                **base,
                "policy": "buy_and_hold",
                "upper_bound": False,
                "sharpe": bh_sharpe[i],
                "volatility": 0.1,
                "total_return": 0.01,
            }
        )
        rows.append(
            {
                **base,
                "policy": "ideal",
                "upper_bound": True,
                "sharpe": 9.0,
                "volatility": 0.1,
                "total_return": 0.5,
            }
        )
        rows.append(
            {
                **base,
                "policy": "hold",
                "upper_bound": False,
                "sharpe": None,
                "volatility": 0.0,
                "total_return": 0.0,
            }
        )
        for policy, d in diffs.items():
            rows.append(
                {
                    **base,
                    "policy": policy,
                    "upper_bound": False,
                    "sharpe": bh_sharpe[i] + d[i],
                    "volatility": 0.1,
                    "total_return": 0.01 + d[i] / 10,
                }
            )
    return pd.DataFrame(rows)  # fmt: skip


def test_leaderboard_numbers_by_hand():
    diffs = {"macd": [0.1, 0.2, 0.0, 0.1]}
    evidence = pooled_evidence(_rows(diffs, [0.05, 0.1, 0.02, 0.08]), pd.DataFrame(), FAST)
    board = evidence.leaderboard.set_index("policy")
    assert list(board.index) == ["macd", "hold"]  # best first; the hindsight bound is not in the family
    assert evidence.windows == 4 and evidence.tickers == 2
    macd = board.loc["macd"]
    assert macd["n"] == 4 and macd["d_sharpe"] == pytest.approx(0.1)
    # t = 0.1 / (sd / 2) with sd = sqrt(0.02 / 3): the paired t-test, two-sided, df 3
    t = 0.1 / (np.sqrt(0.02 / 3) / 2)
    assert macd["p_value"] == pytest.approx(2 * stats.t.sf(t, 3))
    assert macd["d_return"] == pytest.approx(0.01)
    # hold never moves: its Sharpe counts as 0, so its Δ is minus buy-and-hold's
    assert board.loc["hold", "d_sharpe"] == pytest.approx(-np.mean([0.05, 0.1, 0.02, 0.08]))
    # Holm over the family of two
    low, high = sorted([board.loc["macd", "p_value"], board.loc["hold", "p_value"]])
    assert sorted(board["p_holm"]) == pytest.approx([min(1, 2 * low), max(min(1, 2 * low), high)])
    table = leaderboard_table(evidence)
    assert table.iloc[0]["policy"] == "macd" and table.iloc[0]["independent windows"] == 4


def test_headline_says_no_without_evidence_and_yes_with_a_planted_edge():
    rng = np.random.default_rng(0)
    bh = list(rng.normal(0.05, 0.02, 40))
    none = pooled_evidence(_rows({"macd": list(rng.normal(0, 0.05, 40))}, bh), pd.DataFrame(), FAST)
    text = headline(none)
    assert (
        text.startswith("No: nothing beats buy-and-hold") and "over 40 independent test windows of 2" in text
    )
    assert "cannot be told apart" in text
    edge = list(0.2 + rng.normal(0, 0.05, 40))
    planted = pooled_evidence(_rows({"macd": edge}, bh), pd.DataFrame(), FAST)
    text = headline(planted)
    assert text.startswith("Yes: macd beats buy-and-hold on held-out data by +0.2") and "SPA p = " in text


def test_period_paths_exposure_and_trades_by_hand():
    curves = pd.DataFrame(
        {
            "key": "AAA|test",
            "ticker": "AAA",
            "policy": "macd",
            "step": [0, 1, 2, 3],
            "close": [None, 10.0, 11.0, 12.0],
            "value": [100.0, 100.0, 105.0, 110.0],
            "position": [0.0, 5.0, 5.0, 0.0],
            "traded": [0.0, 5.0, 0.0, -5.0],
        }
    )
    exposure, closes, returns, trades = period_paths(curves)["macd"]["AAA"]
    assert exposure.tolist() == pytest.approx([0.5, 55 / 105, 0.0])
    assert closes.tolist() == [10.0, 11.0, 12.0] and trades == 2
    assert returns.tolist() == pytest.approx([0.0, 0.05, 110 / 105 - 1])


def test_no_benchmark_no_answer():
    evidence = pooled_evidence(pd.DataFrame({"policy": ["macd"], "ticker": ["A"]}), pd.DataFrame())
    assert evidence.best is None and headline(evidence).startswith("No answer yet")


def _with_clones(rows: pd.DataFrame, clones: dict[str, str]) -> pd.DataFrame:
    """``rows`` with each clone playing its original's numbers on every window."""
    rows = rows.assign(
        final_value=10_000 * (1 + rows["total_return"]), total_reward=rows["sharpe"].fillna(0.0)
    )
    copies = [rows.loc[rows["policy"] == original].assign(policy=clone) for clone, original in clones.items()]
    return pd.concat([rows, *copies], ignore_index=True)


def test_clones_are_named_never_the_best_and_left_out_of_the_family():
    diffs = {"macd": [-0.01, -0.02, 0.0, -0.01]}
    rows = _with_clones(
        _rows(diffs, [0.05, 0.1, 0.02, 0.08]),
        {"a2c": "buy_and_hold", "ppo": "hold", "oracle": "hold", "moderator_grpo": "hold"},
    )
    evidence = pooled_evidence(rows, pd.DataFrame(), FAST)
    assert evidence.clones == {
        "a2c": "buy_and_hold",
        "ppo": "hold",
        "oracle": "hold",
        "moderator_grpo": "hold",
    }
    board = evidence.leaderboard
    # distinct best first, each clone under its original, the benchmark's clone last
    assert board["policy"].tolist() == ["macd", "hold", "ppo", "moderator_grpo", "oracle", "a2c"]
    assert evidence.best["policy"] == "macd"  # a2c's +0.000 is buy-and-hold itself, not the best
    assert evidence.distinct["policy"].tolist() == ["macd", "hold"]
    # Holm over the two distinct policies only; a clone shows its original's adjusted p
    alone = pooled_evidence(_with_clones(_rows(diffs, [0.05, 0.1, 0.02, 0.08]), {}), pd.DataFrame(), FAST)
    by_policy = board.set_index("policy")
    assert by_policy.loc["macd", "p_holm"] == pytest.approx(
        alone.leaderboard.set_index("policy").loc["macd", "p_holm"]
    )
    assert by_policy.loc["ppo", "p_holm"] == by_policy.loc["hold", "p_holm"]
    assert evidence.mdd_sharpe == pytest.approx(alone.mdd_sharpe)  # the median over distinct ones
    table = leaderboard_table(evidence).set_index("policy")
    assert list(table.index) == [
        "macd",
        "hold",
        "ppo = hold",
        "moderator_grpo = hold",
        "oracle = hold",
        "a2c = buy_and_hold",
    ]
    assert table.loc["a2c = buy_and_hold", "min. detectable Δ Sharpe"] == "= buy_and_hold"  # not 0.000
    assert table.loc["ppo = hold", "Holm p"] == "= hold"
    assert table.loc["macd", "min. detectable Δ Sharpe"] != "= buy_and_hold"
    text = headline(evidence)
    assert text.startswith(
        "No: nothing beats buy-and-hold on held-out data. The best of 2 distinct policies, macd,"
    )
    assert text.endswith(
        "Clones, identical on every independent window and not counted: "
        "a2c = buy_and_hold; ppo, moderator_grpo, oracle = hold."
    )


def test_every_policy_a_clone_has_no_best():
    rows = _with_clones(_rows({}, [0.05, 0.1, 0.02, 0.08]), {"a2c": "buy_and_hold"})
    evidence = pooled_evidence(rows.loc[rows["policy"] != "hold"], pd.DataFrame(), FAST)
    assert evidence.best is None and evidence.clones == {"a2c": "buy_and_hold"}
    assert headline(evidence) == (
        "No: every policy compared is identical to another on every window. "
        "Clones, identical on every independent window and not counted: a2c = buy_and_hold."
    )


def test_a_clone_on_the_independent_windows_is_a_clone_in_the_headline():
    """The main job's case: a2c equals buy-and-hold on every independent test window but trades
    differently in a window overlapping them; the tests read only the independent ones, so
    it is named a clone there, never "the best, +0.000 [+0.000, +0.000]"."""
    diffs = {"macd": [-0.01, -0.02, 0.0, -0.01]}
    rows = _with_clones(_rows(diffs, [0.05, 0.1, 0.02, 0.08]), {"a2c": "buy_and_hold"})
    overlapping = rows.loc[(rows["ticker"] == "AAA") & (rows["window_index"] == 0)].copy()
    overlapping["window_index"] = 99
    overlapping["start_date"] += pd.Timedelta(days=2)  # shares days with window 0: not independent
    overlapping["end_date"] += pd.Timedelta(days=2)
    overlapping.loc[overlapping["policy"] == "a2c", ["final_value", "total_reward"]] = [9_000.0, -1.0]
    rows = pd.concat([rows, overlapping], ignore_index=True)
    assert window_clones(rows) == {}  # over every window a2c is its own policy
    evidence = pooled_evidence(rows, pd.DataFrame(), FAST)
    assert evidence.clones == {"a2c": "buy_and_hold"}
    assert evidence.best["policy"] == "macd"
    assert headline(evidence).endswith(
        "Clones, identical on every independent window and not counted: a2c = buy_and_hold."
    )


def test_a_tiny_difference_is_shown_with_its_digits():
    assert _fmt_ci(0.00012, -0.00001, 0.00031) == "+0.00012 [-0.00001, +0.00031]"
    assert _fmt_ci(0.05, -0.01, 0.1) == "+0.050 [-0.010, +0.100]"
    assert _fmt_ci(0.0, 0.0, 0.0) == "+0.000 [+0.000, +0.000]"  # exactly zero stays short
