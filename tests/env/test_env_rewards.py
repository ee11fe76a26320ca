"""Reward terms worked out by hand (SPEC §1)."""

from __future__ import annotations

import math

import pytest

from stocker_core.env.rewards import (
    FinalStats,
    RewardParams,
    clip,
    final_bonus,
    inflation_factor,
    lookahead_term,
    performance_factor,
    step_reward,
)

P = RewardParams()  # 10,000 cash, W_PERF 0.7, W_INFL 0.3, inflation 5%, penalty 0.01


def test_inflation_factor_is_zero_at_step_zero_and_negative_later():
    real, factor = inflation_factor(0.10, 0, 0.05)
    assert real == pytest.approx(0.10) and factor == pytest.approx(0.0, abs=1e-15)
    # one year: infl = 5%; real = 1.1 / 1.05 - 1
    real, factor = inflation_factor(0.10, 252, 0.05)
    assert real == pytest.approx(1.1 / 1.05 - 1)
    assert factor == pytest.approx(1.1 / 1.05 - 1 - 0.10)
    assert factor < 0


def test_performance_factor_beating_the_ideal():
    # ideal 2%, real 5%: gap -3%, scale max(0.05, 0.5 * 0.10) = 0.05 -> 1 + 0.6
    perf, gap, scale = performance_factor(0.02, 0.05, 0.10)
    assert (gap, scale) == (pytest.approx(-0.03), 0.05)
    assert perf == pytest.approx(1.6)
    # capped at 2
    assert performance_factor(0.0, 1.0, 0.10)[0] == 2.0


def test_performance_factor_close_behind():
    # ideal total 0.30 -> scale 0.15; gap 0.06 -> 1 - 0.4
    perf, gap, scale = performance_factor(0.10, 0.04, 0.30)
    assert scale == pytest.approx(0.15) and gap == pytest.approx(0.06)
    assert perf == pytest.approx(0.6)
    # gap == scale -> exactly 0
    assert performance_factor(0.05, 0.0, 0.0)[0] == pytest.approx(0.0)


def test_performance_factor_far_behind():
    # scale 0.05 (floor), gap 0.08 -> -(0.03 / 0.05)
    perf, _, scale = performance_factor(0.08, 0.0, 0.02)
    assert scale == 0.05
    assert perf == pytest.approx(-0.6)
    assert performance_factor(1.0, 0.0, 0.02)[0] == -1.0  # capped at -1


def test_step_reward_combines_terms_and_invalid_penalty():
    # value 10,200 at step 0: nominal = real = 0.02; ideal 0.02 -> gap 0 -> perf 1
    b = step_reward(10_200.0, 0, 0.02, 0.04, False, P)
    assert b.nominal == pytest.approx(0.02)
    assert b.perf == pytest.approx(1.0)
    assert b.reward == pytest.approx(0.7)
    bad = step_reward(10_200.0, 0, 0.02, 0.04, True, P)
    assert bad.invalid_penalty == 0.01
    assert bad.reward == pytest.approx(0.69)


def test_step_reward_with_inflation_by_hand():
    # step 126 (half a year): infl = 1.05 ** 0.5 - 1; value flat at start cash
    infl = 1.05**0.5 - 1
    real = 1 / (1 + infl) - 1
    b = step_reward(10_000.0, 126, 0.0, 0.0, False, P)
    assert b.real == pytest.approx(real)
    assert b.infl_factor == pytest.approx(real)
    gap = -real  # ideal 0 - real (> 0); scale 0.05
    assert b.perf == pytest.approx(1 - gap / 0.05)
    assert b.reward == pytest.approx(0.7 * (1 - gap / 0.05) + 0.3 * real)


def test_final_bonus_alpha_and_drawdown():
    alpha, dd = final_bonus(FinalStats(11_000.0, 10_500.0, 0.08))
    assert alpha == pytest.approx(11_000 / 10_500 - 1)
    assert dd == pytest.approx(0.03)
    assert final_bonus(FinalStats(20_000.0, 10_000.0, 0.50)) == (0.10, 0.10)  # both capped
    assert final_bonus(FinalStats(9_000.0, 10_000.0, 0.01)) == (0.0, 0.0)
    b = step_reward(10_000.0, 0, 0.0, 0.0, False, P, final=FinalStats(10_000.0, 9_800.0, 0.07))
    assert b.alpha_bonus == pytest.approx(10_000 / 9_800 - 1)
    assert b.dd_penalty == pytest.approx(0.02)
    assert b.reward == pytest.approx(0.7 + b.alpha_bonus - 0.02)


def test_clipping_to_unit_interval():
    # beating the ideal a lot: 0.7 * 2 = 1.4 -> clipped to 1
    b = step_reward(20_000.0, 0, 0.0, 0.0, False, P)
    assert b.raw == pytest.approx(1.4) and b.reward == 1.0
    # far behind with large weights -> clipped to -1
    heavy = P.replace(w_perf=2.0)
    b = step_reward(10_000.0, 0, 0.5, 0.5, True, heavy)
    assert b.raw < -1 and b.reward == -1.0
    assert clip(0.3) == 0.3


def test_lookahead_term_sign_and_disabled():
    assert lookahead_term(0.5, 0.02, 0.1) == pytest.approx(0.05)
    assert lookahead_term(0.5, -0.02, 0.1) == pytest.approx(-0.05)
    assert lookahead_term(-0.5, -0.02, 0.1) == pytest.approx(0.05)
    assert lookahead_term(0.5, 0.02, 0.0) == 0.0
    assert math.isclose(step_reward(10_000.0, 0, 0.0, 0.0, False, P, lookahead=0.05).raw, 0.75)


def test_params_from_settings_defaults():
    from stocker_core.config import Settings

    p = RewardParams.from_settings(Settings())
    assert (p.w_perf, p.w_infl, p.annual_inflation, p.transaction_cost) == (0.7, 0.3, 0.05, 0.001)
    assert p.starting_cash == 10_000.0
