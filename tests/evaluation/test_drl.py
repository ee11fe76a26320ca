"""Deep-RL baselines: tiny seeded trainings, the saved model round trip, the registry,
point-in-time decisions and the missing-model message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from drl_testing import episode_with_history
from gymnasium import spaces

from stocker_core.baselines.drl.agents import DrlPolicy, load_drl_agent, make_drl_policy
from stocker_core.baselines.drl.store import (
    MissingModelError,
    ModelMismatchError,
    current_result,
    drl_model_dir,
)
from stocker_core.baselines.drl.training import (
    DrlConfig,
    DrlConfigError,
    file_sha256,
    reward_curve,
    train_drl_agent,
    train_drl_agents,
)
from stocker_core.config import Settings, get_settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import TradingEnv
from stocker_core.env.policies import make_policy, run_episode
from stocker_core.errors import EmptyDataError, InvalidNameError

TINY = DrlConfig(timesteps=256, seed=3, ppo_n_steps=64, ppo_batch_size=32, curve_points=4)


def _walk(seed: int, n: int = 60) -> np.ndarray:
    return 100 * np.exp(np.cumsum(np.random.default_rng(seed).normal(0.0005, 0.02, n)))


@pytest.fixture(scope="module")
def episodes():
    return [episode_with_history(_walk(seed), history=20, ticker=f"S{seed}") for seed in range(3)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, episodes):
    home = tmp_path_factory.mktemp("home")
    return home, {r.algo: r for r in train_drl_agents(episodes, home, TINY)}


def _observations(episode) -> list:
    env = TradingEnv(episode)
    observation, seen = env.reset(), []
    while not env.done:
        seen.append(observation)
        observation = env.step(Action.hold()).observation
    return seen


def test_training_saves_a_hashed_model_and_points_current_at_it(trained, episodes):
    home, results = trained
    assert set(results) == {"a2c", "ppo"}
    for algo, result in results.items():
        path = Path(result.model_path)
        assert path.parent == drl_model_dir(home, algo) == home / "models" / "drl" / algo
        assert path.name == f"{result.sha256[:12]}.zip" and file_sha256(path) == result.sha256
        assert result.timesteps >= 256 and result.seed == 3
        assert result.episode_keys == [ep.key for ep in episodes]
        assert result.config["timesteps"] == 256 and result.config["algos"] == [algo]
        assert 1 <= len(result.reward_curve) <= 4
        assert result.reward_curve[-1][0] <= result.timesteps
        assert current_result(home, algo) == result
        assert json.loads(path.with_suffix(".json").read_text())["sha256"] == result.sha256
    assert results["ppo"].timesteps == 256  # 4 rollouts of 64 steps


def test_same_seed_gives_the_same_weights_and_reload_gives_the_same_actions(tmp_path, trained, episodes):
    home, results = trained
    again = train_drl_agent("a2c", episodes, tmp_path, TINY)
    first, _ = load_drl_agent("a2c", home)
    second, _ = load_drl_agent("a2c", tmp_path)
    for (name, a), (_, b) in zip(
        first.policy.state_dict().items(), second.policy.state_dict().items(), strict=True
    ):
        assert np.array_equal(a.numpy(), b.numpy()), name
    assert again.sha256 != "" and again.timesteps == results["a2c"].timesteps

    policy = make_drl_policy("a2c", TradingEnv(episodes[0]), home)
    features = np.stack([policy.adapter.features(o) for o in _observations(episodes[0])])
    predicted, _ = first.predict(features, deterministic=True)
    reloaded, _ = (
        type(first).load(results["a2c"].model_path, device="cpu").predict(features, deterministic=True)
    )
    assert np.array_equal(predicted, reloaded)


def test_policies_play_whole_episodes_through_the_registry(trained, episodes):
    home, _ = trained
    settings = Settings(home=home)
    for algo in ("a2c", "ppo"):
        env = TradingEnv(episodes[1])
        first = run_episode(env, make_policy(algo, env, settings=settings))
        again = run_episode(env, make_policy(algo, env, settings=settings))
        assert first["actions"] == again["actions"] and len(first["actions"]) == 40
        assert env.invalid_count == 0  # to_action only makes feasible trades


def test_missing_model_says_to_materialize_drl_agents(tmp_path, episodes):
    with pytest.raises(MissingModelError) as caught:
        make_policy("ppo", TradingEnv(episodes[0]), settings=Settings(home=tmp_path))
    assert str(caught.value).startswith(
        "no trained ppo model: materialize drl_agents first (stocker materialize --groups evaluation)"
    )


class _EchoModel:
    """Stands in for an SB3 model: the action is a function of every feature."""

    observation_space = spaces.Box(-1e3, 1e3, shape=(15,), dtype=np.float32)

    def predict(self, features: np.ndarray, deterministic: bool = True) -> tuple[int, None]:
        return int(abs(float(features.sum())) * 1e4) % 7, None


def test_decisions_before_a_planted_future_spike_do_not_change(trained):
    home, _ = trained
    closes = _walk(11)
    spiked = closes.copy()
    spiked[20 + 25 :] *= 3.0  # from window step 25 on

    def play(series: np.ndarray, model=None) -> tuple[list[Action], list[np.ndarray]]:
        env = TradingEnv(episode_with_history(series, history=20))
        policy = DrlPolicy(model, env, 10, (0.25, 0.5, 1.0)) if model else make_drl_policy("ppo", env, home)
        observation, actions, features = env.reset(), [], []
        while not env.done:
            features.append(policy.adapter.features(observation))
            actions.append(policy.act(observation))
            observation = env.step(actions[-1]).observation
        return actions, features

    for model in (None, _EchoModel()):
        plain, plain_features = play(closes, model)
        spike, spike_features = play(spiked, model)
        assert plain[:25] == spike[:25]
        assert all(
            np.array_equal(a, b) for a, b in zip(plain_features[:25], spike_features[:25], strict=True)
        )
        assert not np.array_equal(plain_features[25], spike_features[25])
    assert plain[25:] != spike[25:]  # the echo model does react once the spike is in the past


def test_reward_curve_means_buckets_of_episodes():
    assert reward_curve([1, 2, 3, 4, 5], [10, 10, 10, 10, 10], 2) == [(30, 2.0), (50, 4.5)]
    assert reward_curve([1.0, 3.0], [40, 42], 50) == [(40, 1.0), (82, 3.0)]
    assert reward_curve([], [], 5) == []


def test_bad_input_raises_clear_errors(tmp_path, episodes):
    with pytest.raises(InvalidNameError, match="use one of a2c, ppo"):
        train_drl_agent("dqn", episodes, tmp_path, TINY)
    with pytest.raises(EmptyDataError, match="no training episodes for a2c"):
        train_drl_agent("a2c", [], tmp_path, TINY)
    with pytest.raises(DrlConfigError, match="fractions"):
        DrlConfig(fractions=(0.5, 1.5))
    with pytest.raises(InvalidNameError):
        DrlConfig(algos=("a2c", "sac"))
    with pytest.raises(MissingModelError, match="no trained a2c model"):
        load_drl_agent("a2c", tmp_path)


def test_a_model_of_another_shape_is_refused(episodes):
    with pytest.raises(ModelMismatchError, match="retrain it"):
        DrlPolicy(_EchoModel(), TradingEnv(episodes[0]), 5, (0.25, 0.5, 1.0))  # 10 features, not 15


def _cli(home: Path, monkeypatch, *args: str):
    from typer.testing import CliRunner

    from stocker_core.baselines.drl import commands as drl_cli
    from stocker_core.cli import build_app

    app = build_app([drl_cli.commands])
    monkeypatch.setenv("STOCKER_HOME", str(home))
    get_settings(fresh=True)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        monkeypatch.undo()
        get_settings(fresh=True)


def test_cli_info_lists_the_current_models_or_says_what_is_missing(trained, tmp_path, monkeypatch):
    home, results = trained
    shown = _cli(home, monkeypatch, "drl", "info", "--json")
    assert shown.exit_code == 0, shown.output
    models = json.loads(shown.output)["models"]
    assert [(m["algo"], m["sha256"]) for m in models] == [(a, results[a].sha256) for a in ("a2c", "ppo")]
    empty = _cli(tmp_path, monkeypatch, "drl", "info")
    assert empty.exit_code == 1 and "materialize drl_agents first" in empty.output


def test_cli_train_reports_bad_input_with_exit_code_2(tmp_path, monkeypatch):
    unknown = _cli(tmp_path, monkeypatch, "drl", "train", "--algos", "a2c,dqn")
    assert unknown.exit_code == 2 and "unknown deep-RL algorithm 'dqn'" in unknown.output
    no_data = _cli(tmp_path, monkeypatch, "drl", "train", "--timesteps", "64")
    assert no_data.exit_code == 2 and "materialize the `splits` asset" in no_data.output


def test_backtests_play_many_episodes_in_one_batch_as_one_at_a_time(trained, episodes, monkeypatch):
    """The registry's batch decider (one predict call per step for every episode) gives the
    runs the per-episode policy gives, episode by episode."""
    from stocker_core.evaluation.backtests import backtest_many

    home, _ = trained
    settings = Settings(home=home)
    batched = backtest_many(episodes, ["a2c", "ppo"], seeds=[0, 1, 2], settings=settings)
    alone = backtest_many(episodes, ["a2c", "ppo"], seeds=[0, 1, 2], settings=settings, vectorised=False)
    for fast, slow in zip(batched, alone, strict=True):
        assert not fast.failures and [r.policy for r in fast.runs] == ["a2c", "ppo"]
        for a, b in zip(fast.runs, slow.runs, strict=True):
            assert a.method == "batched" and b.method == "per_step"
            assert np.array_equal(a.traded, b.traded) and np.array_equal(a.values, b.values)
            np.testing.assert_equal(a.metrics, b.metrics)


def test_training_leaves_nothing_in_the_temporary_folder(tmp_path, episodes, monkeypatch):
    """SB3's default logger made an empty ``SB3-<time>`` folder in /tmp for every training."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    config = DrlConfig(timesteps=32, seed=3, ppo_n_steps=16, ppo_batch_size=8)
    train_drl_agent("a2c", episodes, tmp_path / "home", config)
    assert list(scratch.iterdir()) == []
