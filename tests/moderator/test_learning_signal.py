"""What the moderator's fit learns from: the market-relative training return, the reward
regression whose argmax is the best answer in expectation, and the averaged weights."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from stocker_core.language_model.policy_gradient import reward_regression_loss, soft_target_loss
from stocker_core.moderator.answer_fit import _update_average
from stocker_core.moderator.rewards import MIN_PEERS, ExcessReward, market_moves


def _context(ticker: str, closes: list[float], start: str = "2024-01-02") -> SimpleNamespace:
    dates = pd.bdate_range(start, periods=len(closes))
    episode = SimpleNamespace(ticker=ticker, dates=dates, key=f"{ticker}|{start}")
    return SimpleNamespace(env=SimpleNamespace(closes=np.asarray(closes, dtype=float), episode=episode))


def _three_tickers() -> dict[str, SimpleNamespace]:
    # day-1 returns +10%, +0%, -4% (mean +2%); day-2 returns +0%, +5%, +10% (mean +5%)
    return {
        "A": _context("A", [100.0, 110.0, 110.0]),
        "B": _context("B", [50.0, 50.0, 52.5]),
        "C": _context("C", [25.0, 24.0, 26.4]),
    }


def test_market_moves_are_the_days_cross_sectional_means_and_their_average():
    means, drift = market_moves(_three_tickers(), horizon=1)
    days = pd.bdate_range("2024-01-02", periods=2)
    assert means[days[0]] == pytest.approx(0.02)
    assert means[days[1]] == pytest.approx(0.05)
    assert drift == pytest.approx(0.035)


def test_the_relative_return_keeps_the_drift_and_drops_the_days_common_move():
    contexts = _three_tickers()
    relative = ExcessReward(contexts, horizon=1, market_relative=True)
    raw = ExcessReward(contexts, horizon=1)
    # A on day 1: +10% raw, the day's mean +2%, the drift +3.5%: 0.10 - 0.02 + 0.035
    assert relative.forward_return("A", 0) == pytest.approx(0.115)
    assert raw.forward_return("A", 0) == pytest.approx(0.10)
    # C on day 2: +10% raw, mean +5%: 0.10 - 0.05 + 0.035
    assert relative.forward_return("C", 1) == pytest.approx(0.085)
    assert relative.forward_return("C", 2) is None  # no session after the last


def test_days_with_too_few_tickers_keep_the_raw_return():
    assert MIN_PEERS == 3
    contexts = {k: v for k, v in _three_tickers().items() if k != "C"}
    reward = ExcessReward(contexts, horizon=1, market_relative=True)
    assert reward.forward_return("A", 0) == pytest.approx(0.10)


def _fit_one_state(loss_of, draws: np.ndarray, steps: int = 1500) -> np.ndarray:
    """One state's logits fitted to every day's rewards at once (one prompt seen on many days)."""
    logits = torch.zeros(1, draws.shape[1], requires_grad=True)
    optimizer = torch.optim.Adam([logits], lr=0.02)
    batch = torch.tensor(draws, dtype=torch.float32)
    for _ in range(steps):
        loss, _ = loss_of(torch.log_softmax(logits, dim=-1).expand(len(batch), -1), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return logits.detach()[0].numpy()


def test_the_reward_regression_picks_the_best_answer_in_expectation_where_soft_targets_do_not():
    # answer 0 pays 0.5 every day (the better answer); answer 1 pays +2.5 on 45% of days and
    # -1.2 on the rest (expected 0.465); answer 2 pays 0
    rng = np.random.default_rng(1)
    lucky = rng.random(4000) < 0.45
    draws = np.stack([np.full(4000, 0.5), np.where(lucky, 2.5, -1.2), np.zeros(4000)], axis=1)
    assert draws.mean(axis=0).argmax() == 0
    regression = _fit_one_state(lambda lp, r: reward_regression_loss(lp, r, 1.0), draws)
    soft = _fit_one_state(lambda lp, r: soft_target_loss(lp, r, 1.0, renormalize=True), draws)
    assert regression.argmax() == 0
    assert soft.argmax() == 1  # the average of softmax(R) favours the answer with the big days
    centred = regression - regression.mean()
    assert centred == pytest.approx(draws.mean(axis=0) - draws.mean(), abs=0.05)


def test_the_weight_average_moves_by_one_minus_the_decay_per_update():
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    average = {"weight": model.weight.detach().clone()}
    with torch.no_grad():
        model.weight.fill_(1.0)
    _update_average(average, model, decay=0.5)
    assert float(average["weight"]) == pytest.approx(0.5)
    _update_average(average, model, decay=0.5)
    assert float(average["weight"]) == pytest.approx(0.75)


def test_the_side_decision_sums_each_sides_answers_and_moves_in_full():
    from stocker_core.moderator.answers import ANSWERS, decided_indices

    # hold 0.20; buys 0.15 + 0.05 + 0.05 + 0.05 = 0.30; sells 0.10 each = 0.40 (none above 0.20)
    probabilities = np.array([[0.20, 0.15, 0.05, 0.05, 0.05, 0.10, 0.10, 0.10, 0.10]])
    assert ANSWERS[int(decided_indices(probabilities)[0])] == "hold q0"
    assert ANSWERS[int(decided_indices(probabilities, by_side=True)[0])] == "sell q4"
    leaning_buy = np.array([[0.30, 0.10, 0.10, 0.10, 0.10, 0.075, 0.075, 0.075, 0.075]])
    assert ANSWERS[int(decided_indices(leaning_buy, by_side=True)[0])] == "buy q4"


def test_the_defaults_are_the_measured_learning_recipe():
    """The recipe the learning check measured (docs/training.md) is what a plain config trains."""
    from stocker_core.moderator.config import load_config
    from stocker_core.moderator.reward_regression import fit_settings

    config = load_config()
    assert (config.market_relative, config.objective) == (True, "reward_regression")
    assert config.target_temperature == 1.0
    assert (config.weight_averaging, config.decode, config.checkpoint) == (0.99, "side", "last")
    rl, sft = fit_settings(config, "grpo", 640), fit_settings(config, "sft", 640)
    assert rl.keep_last and rl.by_side and rl.averaging == 0.99
    assert not sft.keep_last and sft.by_side  # SFT publishes its best valid check
