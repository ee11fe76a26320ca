"""The forecast baseline: AR on log returns of the last 30 closes, long when the
predicted return beats θ, flat otherwise (numbers worked out by hand)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from drl_testing import episode_with_history, zigzag

from stocker_core.baselines.forecast import (
    BadPriceError,
    ForecastConfig,
    ForecastConfigError,
    ForecastPolicy,
    InsufficientHistoryError,
    forecast_next_close,
)
from stocker_core.env.actions import Action
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import episode_from_closes
from stocker_core.env.policies import make_policy, run_episode
from stocker_core.errors import StockerError


def _actions(env: TradingEnv, policy: ForecastPolicy) -> list[Action]:
    observation, actions = env.reset(), []
    while not env.done:
        action = policy.act(observation)
        actions.append(action)
        observation = env.step(action).observation
    return actions


def test_steady_uptrend_predicts_the_trend_and_goes_long_all_in():
    closes = 100 * 1.01 ** np.arange(40)
    forecast = forecast_next_close(closes[:31])
    assert forecast.close == pytest.approx(100 * 1.01**30)
    assert forecast.predicted_return == pytest.approx(0.01, abs=1e-12)

    env = TradingEnv(episode_with_history(closes, history=30))
    actions = _actions(env, ForecastPolicy(cost=0.001))
    # 10000 / (134.7849 * 1.001) = 74.1 -> 74 whole shares on day 1, then held
    assert actions[0] == Action.buy(74)
    assert all(a == Action.hold() for a in actions[1:])
    assert env.portfolio.position == 74


def test_steady_downtrend_stays_flat():
    closes = 100 * 0.99 ** np.arange(40)
    assert forecast_next_close(closes).predicted_return == pytest.approx(-0.01, abs=1e-12)
    env = TradingEnv(episode_with_history(closes, history=30))
    assert all(a == Action.hold() for a in _actions(env, ForecastPolicy(cost=0.001)))
    assert env.portfolio.cash == 10_000 and env.portfolio.position == 0


def test_zigzag_is_an_exact_ar1_with_phi_minus_one():
    # log returns alternate +a, -a: the AR(1) fit is c = 0, phi = -1, so it predicts a reversal
    closes = zigzag(40)
    assert forecast_next_close(closes[:31]).predicted_close == pytest.approx(101.0)  # after 101 -> 100
    assert forecast_next_close(closes[:32]).predicted_close == pytest.approx(100.0)  # after 100 -> 101

    env = TradingEnv(episode_with_history(closes, history=30))
    actions = _actions(env, ForecastPolicy(cost=0.001))
    # buy 99 at 100 (99 * 100.1 = 9909.9), sell at 101: cash 90.1 + 99 * 101 * 0.999 = 10079.101,
    # which buys 100 shares at 100 (100 * 100.1 = 10010)
    assert actions[:4] == [Action.buy(99), Action.sell(99), Action.buy(100), Action.sell(100)]
    assert env.rewards and env.invalid_count == 0


def test_threshold_keeps_a_small_predicted_gain_flat():
    closes = 100 * 1.005 ** np.arange(40)
    env = TradingEnv(episode_with_history(closes, history=30))
    actions = _actions(env, ForecastPolicy(cost=0.001, config=ForecastConfig(threshold=0.01)))
    assert all(a == Action.hold() for a in actions)


def test_too_little_history_holds_and_says_why():
    closes = 100 * 1.01 ** np.arange(35)
    env = TradingEnv(episode_from_closes(closes))  # no history before the window
    policy = ForecastPolicy(cost=0.001)
    observation = env.reset()
    for _ in range(29):  # steps 0..28 see 1..29 closes
        assert policy.act(observation) == Action.hold()
        observation = env.step(Action.hold()).observation
    assert "needs 30 closes" in policy.note and "got 29" in policy.note
    assert policy.act(observation) == Action.buy(74)  # 10000 / (133.45 * 1.001) = 74.9
    assert policy.note is None
    with pytest.raises(InsufficientHistoryError, match="needs 30 closes"):
        forecast_next_close(closes[:10])


def test_decisions_before_a_planted_future_spike_do_not_change():
    rng = np.random.default_rng(7)
    closes = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, 70)))
    spiked = closes.copy()
    spiked[30 + 25 :] *= 3.0  # from window step 25 on

    def forecasts(series: np.ndarray) -> tuple[list[Action], list[float]]:
        env = TradingEnv(episode_with_history(series, history=30))
        policy, observation, actions, predicted = ForecastPolicy(cost=0.001), env.reset(), [], []
        while not env.done:
            actions.append(policy.act(observation))
            predicted.append(policy.last_forecast.predicted_close)
            observation = env.step(actions[-1]).observation
        return actions, predicted

    plain_actions, plain_pred = forecasts(closes)
    spiked_actions, spiked_pred = forecasts(spiked)
    assert plain_actions[:25] == spiked_actions[:25]
    assert plain_pred[:25] == spiked_pred[:25]
    assert plain_pred[25] != spiked_pred[25]  # the spike is visible once it is in the past


def test_registry_builds_it_and_a_40_step_episode_runs_fast():
    closes = 100 * np.exp(np.cumsum(np.random.default_rng(1).normal(0, 0.01, 70)))
    env = TradingEnv(episode_with_history(closes, history=30))
    policy = make_policy("forecast", env)
    assert isinstance(policy, ForecastPolicy) and policy.cost == env.params.transaction_cost
    started = time.perf_counter()
    trajectory = run_episode(env, policy)
    assert time.perf_counter() - started < 5.0  # a sanity bound; speed is measured by the benchmarks
    assert len(trajectory["actions"]) == 40 and env.invalid_count == 0


def test_bad_settings_and_prices_raise_stocker_errors():
    with pytest.raises(ForecastConfigError, match="lags must be >= 1"):
        ForecastConfig(lags=0)
    with pytest.raises(ForecastConfigError, match="use lookback >= 7"):
        ForecastConfig(lookback=6, lags=2)
    with pytest.raises(BadPriceError):
        forecast_next_close(np.r_[np.full(29, 100.0), 0.0])
    assert issubclass(BadPriceError, StockerError) and issubclass(InsufficientHistoryError, StockerError)


def test_forecast_is_registered_by_its_layer_function_not_at_import():
    from stocker_core.baselines import forecast
    from stocker_core.env import policies
    from stocker_core.errors import InvalidNameError

    env = TradingEnv(episode_from_closes(100 * 1.01 ** np.arange(5)))
    policies.unregister_policy("forecast")
    try:
        with pytest.raises(InvalidNameError, match="unknown policy 'forecast'"):
            make_policy("forecast", env)
        assert not policies.has_plan("forecast")
        forecast.register_policies()  # what the composition root calls
        policy = make_policy("forecast", env)
    finally:
        forecast.register_policies()
    assert type(policy).__name__ == "ForecastPolicy" and policies.has_plan("forecast")
    assert policy.act(env.reset()) == Action.hold()  # 1 close: too little history


def test_batched_forecast_equals_statsmodels_fit_day_by_day():
    from stocker_core.baselines.forecast import forecast_next_close, predicted_returns

    rng = np.random.default_rng(11)
    closes = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, 90)))
    for config in (ForecastConfig(), ForecastConfig(lookback=40, lags=3)):
        batched = predicted_returns(closes, config)
        assert np.isnan(batched[: config.lookback - 1]).all()
        for i in range(config.lookback - 1, len(closes)):
            single = forecast_next_close(closes[: i + 1], config).predicted_return
            assert batched[i] == pytest.approx(single, abs=1e-12), i
