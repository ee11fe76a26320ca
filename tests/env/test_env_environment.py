"""Episodes, the environment, the Gymnasium adapter and grader == environment."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from stocker_core.env.actions import Action
from stocker_core.env.environment import EpisodeDoneError, SnapshotError, TradingEnv
from stocker_core.env.episode import episode_from_closes, load_episode
from stocker_core.env.grader import (
    GradeError,
    expand_grid,
    grade_batch,
    grade_trajectory,
    grid_columns,
    sweep,
)
from stocker_core.env.policies import POLICIES, make_policy, register_policy, run_episode
from stocker_core.env.rewards import RewardParams
from stocker_core.errors import EmptyDataError, InvalidNameError

TASKS = {"task_easy": 43, "task_medium": 41, "task_hard": 42}


@pytest.fixture
def episodes(seed_settings):
    return {task: load_episode(task, seed_settings) for task in TASKS}


def test_seed_tasks_have_the_reference_trading_days(episodes):
    for task, days in TASKS.items():
        ep = episodes[task]
        assert ep.trading_days == days
        assert ep.starting_cash == 10_000.0
        assert len(ep.history) > 100
        assert ep.history["date"].max() < ep.bars["date"].min()
    assert episodes["task_easy"].key == "AAPL|2023-08-01"
    assert str(episodes["task_medium"].start) == "2024-01-02"
    assert str(episodes["task_hard"].end) == "2022-10-31"


def test_point_in_time_accessor_never_shows_later_bars(episodes):
    ep = episodes["task_easy"]
    for step in (0, 10, ep.trading_days - 1):
        seen = ep.as_of(step)
        assert seen["date"].max() == ep.dates[step]
        assert len(seen) == len(ep.history) + step + 1
    assert ep.as_of(ep.start)["date"].max() == ep.dates[0]


def test_load_episode_errors(seed_settings):
    with pytest.raises(InvalidNameError, match="unknown task"):
        load_episode("task_impossible", seed_settings)
    with pytest.raises(InvalidNameError, match="partition key|month"):
        load_episode("AAPL|2023-08-15", seed_settings)
    with pytest.raises(EmptyDataError, match="no bars"):
        load_episode("AAPL|1999-01-01", seed_settings)


def test_actions_reject_bad_quantities():
    assert Action.model_validate({"side": "BUY", "quantity": 3.0}).quantity == 3
    for bad in (
        {"side": "short", "quantity": 1},
        {"side": "buy", "quantity": -1},
        {"side": "buy", "quantity": float("nan")},
        {"side": "buy", "quantity": 10**12},
        {"side": "buy", "quantity": 1.5},
        {"side": "buy", "quantity": True},
    ):
        with pytest.raises(ValidationError):
            Action.model_validate(bad)


def test_step_accounting_costs_and_invalid_trades():
    env = TradingEnv(episode_from_closes([100.0, 110.0, 90.0]), RewardParams())
    r = env.step({"side": "buy", "quantity": 10})
    assert env.portfolio.cash == pytest.approx(10_000 - 10 * 100 * 1.001)
    assert not r.info["invalid"] and r.observation.step == 1
    r = env.step(Action.sell(11))  # more than held: invalid, not executed
    assert r.info["invalid"] and env.portfolio.position == 10
    assert r.info["breakdown"]["invalid_penalty"] == 0.01
    r = env.step(Action.sell(10))
    assert env.portfolio.cash == pytest.approx(10_000 - 1001 + 10 * 90 * 0.999)
    assert r.done and r.info["breakdown"]["alpha_bonus"] >= 0
    with pytest.raises(EpisodeDoneError):
        env.step(Action.hold())


def test_buy_beyond_cash_is_invalid():
    env = TradingEnv(episode_from_closes([100.0, 100.0]))
    r = env.step(Action.buy(100))  # 100 * 100 * 1.001 > 10,000
    assert r.info["invalid"] and env.portfolio.cash == 10_000.0


def test_snapshot_restore_replays_exactly(episodes):
    env = TradingEnv(episodes["task_hard"])
    policy = make_policy("random", env, seed=3)
    obs = env.reset()
    for _ in range(15):
        obs = env.step(policy.act(obs)).observation
    snap = env.snapshot()
    tail = [Action.buy(5), Action.hold(), Action.sell(3), Action.sell(100)]
    first = [env.step(a).reward for a in tail]
    env.restore(snap)
    assert env.t == 15
    assert [env.step(a).reward for a in tail] == first
    other = TradingEnv(episodes["task_easy"])
    with pytest.raises(SnapshotError):
        other.restore(snap)
    with pytest.raises(SnapshotError):
        env.restore({"episode_key": snap["episode_key"], "step": "x"})


@pytest.mark.parametrize("task", list(TASKS))
def test_grader_equals_environment_on_random_policies(episodes, task):
    ep = episodes[task]
    params = [
        RewardParams(),
        RewardParams(transaction_cost=0.003, lookahead_k=3, lookahead_weight=0.2, w_perf=0.6),
    ]
    sides, qtys, expected, invalid_steps = [], [], [], 0
    for params_i in params:
        env = TradingEnv(ep, params_i)
        for seed in range(8):
            traj = run_episode(env, make_policy("random", env, seed))
            graded = grade_trajectory(traj)
            np.testing.assert_allclose(graded.rewards[0], traj["rewards"], rtol=0, atol=1e-9)
            assert graded.final_value[0] == pytest.approx(traj["final_value"], abs=1e-9)
            invalid_steps += int(graded.invalid.sum())
            if params_i == params[0]:
                sides.append([{"hold": 0, "buy": 1, "sell": 2}[a["side"]] for a in traj["actions"]])
                qtys.append([a["quantity"] for a in traj["actions"]])
                expected.append(traj["rewards"])
    assert invalid_steps > 0  # the random policy exercises the invalid branch
    batch = grade_batch(np.array(sides), np.array(qtys), ep.closes, params[0])  # vectorized path
    np.testing.assert_allclose(batch.rewards, np.array(expected), rtol=0, atol=1e-9)


def test_grader_partial_trajectory_and_sweep(episodes):
    env = TradingEnv(episodes["task_easy"])
    policy = make_policy("random", env, seed=11)
    obs = env.reset()
    for _ in range(20):
        obs = env.step(policy.act(obs)).observation
    partial = env.trajectory()
    graded = grade_trajectory(partial)
    assert not graded.complete
    np.testing.assert_allclose(graded.rewards[0], partial["rewards"], atol=1e-9)

    full = run_episode(env, make_policy("random", env, seed=5))
    grid = {
        "transaction_cost": [0.0, 0.001, 0.002],
        "w_perf": [0.5, 0.7, 0.9],
        "w_infl": [0.1, 0.2, 0.3, 0.4],
        "annual_inflation": [0.0, 0.02, 0.05, 0.08, 0.1],
    }
    result = sweep(full, grid)
    assert result.rewards.shape == (180, 43)
    combos = expand_grid(grid)
    for i in (0, 57, 179):  # spot-check combinations against a live environment
        live = run_episode(TradingEnv(episodes["task_easy"], combos[i]), _replay(full))
        np.testing.assert_allclose(result.rewards[i], live["rewards"], atol=1e-9)
    assert result.table()[57]["w_perf"] == combos[57].w_perf
    assert len(grid_columns(grid)["w_perf"]) == 180
    with pytest.raises(GradeError, match="sweepable"):
        sweep(full, {"episode_months": [1, 2]})


def _replay(trajectory):
    actions = iter(trajectory["actions"])

    class Replay:
        def act(self, observation):
            return Action.model_validate(next(actions))

    return Replay()


def test_policies_and_registry(episodes):
    env = TradingEnv(episodes["task_easy"])
    bh = run_episode(env, make_policy("buy_and_hold", env))
    assert bh["final_value"] == pytest.approx(env.buy_and_hold_final)
    hold = run_episode(env, make_policy("hold", env))
    assert hold["final_value"] == 10_000.0
    ideal = run_episode(env, make_policy("ideal", env))
    assert ideal["final_value"] > bh["final_value"]
    assert ideal["final_value"] / 10_000 - 1 <= env.ideal_total + 1e-12
    register_policy("always_hold_test", lambda e, seed, settings: make_policy("hold", e))
    try:
        assert run_episode(env, make_policy("always_hold_test", env))["final_value"] == 10_000.0
    finally:
        POLICIES.pop("always_hold_test")
    with pytest.raises(InvalidNameError, match="unknown policy"):
        make_policy("nope", env)


def test_gym_wrapper_is_seeded_and_plays(episodes):
    from gymnasium.utils.env_checker import check_env

    from stocker_core.env.gym_env import StockerGymEnv

    env = StockerGymEnv(list(episodes.values()))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=1)
    first_key = info["episode_key"]
    assert env.observation_space.contains(obs)
    _, info2 = env.reset(seed=1)
    assert info2["episode_key"] == first_key
    env.action_space.seed(0)
    done, steps, total = False, 0, 0.0
    while not done:
        obs, reward, done, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        total += reward
        assert -1.0 <= reward <= 1.0 and not truncated
    assert steps == env.env.total_steps
