"""SFT and GRPO on the seed tasks at tiny sizes: valid outputs, adapters that reload exactly,
reproducible runs, the moderators as registry policies."""

import json

import numpy as np
import pytest
from training_testing import VALID, tiny_config

from stocker_core.env.environment import TradingEnv
from stocker_core.env.policies import make_policy, policy_names, run_episode
from stocker_core.language_model.factory import ModelLoadError, build_tiny, load_with_adapter
from stocker_core.language_model.runtime import weights_sha256
from stocker_core.moderator.generation import generate
from stocker_core.moderator.prompts import parse_completion
from stocker_core.moderator.sft import run_sft
from stocker_core.moderator.training import load_episodes, model_dir
from stocker_core.warehouse.db import Warehouse


def test_after_sft_over_95_percent_of_held_out_outputs_parse(trained):
    from stocker_core.moderator.training import prepare_data

    data = prepare_data(trained.config, trained.settings, Warehouse(trained.settings.warehouse_path))
    sft = load_with_adapter(model_dir(trained.settings, "base"), model_dir(trained.settings, "sft"))
    prompts = [r for ctx in data.valid_contexts for r in _rows(ctx)]
    outputs = generate(sft, prompts)
    parsed = [parse_completion(o, 10_000.0, 10, 100.0).parsed for o in outputs]
    assert len(prompts) == 43 and sum(parsed) / len(parsed) > 0.95


def _rows(ctx):
    from stocker_core.moderator.dataset import episode_rows

    return [row["prompt_words"] for row in episode_rows(ctx)]


def test_grpo_writes_an_adapter_that_reloads_to_the_same_greedy_actions(trained, seed_data):
    grpo_dir = model_dir(trained.settings, "grpo")
    assert (grpo_dir / "adapter_config.json").is_file() and (grpo_dir / "curve.png").is_file()
    report = json.loads((grpo_dir / "training.json").read_text())
    assert report["steps"] == 3 and report["sha256"] == weights_sha256(grpo_dir)
    extra = report["extra"]
    assert extra["reward"] == "excess" and len(extra["frac_reward_zero_std"]) == 3
    assert 0 <= extra["frac_reward_zero_std_last_tenth"] < 0.5  # the nine answers' rewards differ
    assert sum(extra["action_distribution_last"].values()) == pytest.approx(1.0)
    first = load_with_adapter(model_dir(trained.settings, "base"), grpo_dir)
    second = load_with_adapter(model_dir(trained.settings, "base"), grpo_dir)
    prompts = [r["prompt_words"] for r in seed_data.rows]
    assert generate(first, prompts) == generate(second, prompts)
    sft = load_with_adapter(model_dir(trained.settings, "base"), model_dir(trained.settings, "sft"))
    # the checkpoint is chosen on valid, its start (the SFT adapter, step 0) included
    curve = dict(extra["valid_curve"])
    assert set(curve) == {0, 3} and extra["kept_valid_reward"] == max(curve.values())
    assert curve[extra["kept_step"]] == extra["kept_valid_reward"]
    same_as_sft = weights_sha256(grpo_dir) == weights_sha256(model_dir(trained.settings, "sft"))
    assert same_as_sft == (extra["kept_step"] == 0)
    assert (grpo_dir / "steps.jsonl").read_text().count("\n") == 3  # the per-step log beside the model
    assert len(generate(sft, prompts[:5])) == 5


def test_models_runs_and_held_out_table(trained):
    runs = Warehouse(trained.settings.warehouse_path).query(
        "SELECT model_name, kind, base_model, seed, episode_keys, vote_cache_version, sha256 "
        "FROM models.runs ORDER BY created_at"
    )
    assert list(runs["model_name"]) == ["moderator_base", "moderator_sft", "moderator_grpo"]
    assert set(runs["base_model"]) == {"tiny"} and set(runs["seed"]) == {0}
    assert json.loads(runs["episode_keys"].iloc[2]) == ["META|2022-09-01", "INTC|2024-01-01"]
    assert runs["vote_cache_version"].iloc[2].startswith("rule:")
    table = trained.reports[-1].heldout
    assert list(table["policy"]) == [
        "moderator_base",
        "moderator_sft",
        "moderator_grpo",
        "rule_council",
        "buy_and_hold",
        "random",
    ]
    assert set(table["episodes"]) == {1}


def test_sft_is_reproducible_with_a_fixed_seed(seed_data, tmp_path):
    config = tiny_config(sft_epochs=2.0)
    digests = []
    for name in ("a", "b"):
        result = run_sft(build_tiny(config.model_spec()), seed_data.rows, config, tmp_path / name)
        digests.append(weights_sha256(result.adapter_dir))
    assert digests[0] == digests[1]


def test_moderators_are_registry_policies(trained, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(trained.settings.home))
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(trained.settings.files_dir))
    from stocker_core.config import get_settings

    settings = get_settings(fresh=True)
    assert {"moderator_base", "moderator_sft", "moderator_grpo"} <= set(policy_names())
    (episode,) = load_episodes(VALID, settings, Warehouse(settings.warehouse_path))
    env = TradingEnv(episode, settings)
    policy = make_policy("moderator_sft", env, settings=settings)
    trajectory = run_episode(env, policy)
    assert len(trajectory["actions"]) == 43 and policy.unparsable <= 2
    get_settings(fresh=True)


def test_missing_adapter_tells_the_user_to_materialize(tmp_path, seed_data):
    from stocker_core.config import Settings
    from stocker_core.moderator.policy import ModeratorPolicy

    env = next(iter(seed_data.train_contexts.values())).env
    with pytest.raises(ModelLoadError, match="materialize the training group first"):
        ModeratorPolicy(env, "grpo", Settings(home=tmp_path))


def test_one_prompt_fast_path_gives_the_batched_generate_tokens(trained, seed_data):
    """The policies' single-prompt greedy loop equals transformers' generate, prompt by prompt."""
    prompts = [r["prompt_words"] for r in seed_data.rows][:40]
    for stage in ("sft", "grpo"):
        model = load_with_adapter(model_dir(trained.settings, "base"), model_dir(trained.settings, stage))
        assert [generate(model, [p])[0] for p in prompts] == generate(model, prompts, batch_size=1)


def test_held_out_records_equal_the_backtests_of_the_same_episodes(trained, monkeypatch):
    """One scoring home: the training's held-out records are what evaluation.backtests's
    backtest gives for the same episodes and policies."""
    from stocker_core.config import use_settings
    from stocker_core.evaluation.backtests import backtest

    records = json.loads((model_dir(trained.settings, "grpo") / "training.json").read_text())[
        "heldout_episodes"
    ]
    by_key = {(r["policy"], r["episode_key"]): r for r in records}
    episode = load_episodes(VALID, trained.settings, Warehouse(trained.settings.warehouse_path))[0]
    with use_settings(trained.settings):
        result = backtest(
            episode, ["moderator_sft", "moderator_grpo", "buy_and_hold"], settings=trained.settings
        )
    assert not result.failures
    for run in result.runs:
        record = by_key[(run.policy, episode.key)]
        assert record["final_value"] == pytest.approx(float(run.values[-1]), abs=1e-9)
        assert record["total_return"] == pytest.approx(run.metrics["total_return"], abs=1e-12)
        assert record["trades"] == run.metrics["trades"] and record["unparsable"] == 0


def test_moderators_play_many_episodes_in_one_batch_as_one_at_a_time(trained):
    """Backtests batch the moderators across episodes (step t of every episode in one model
    call); each episode's run equals playing it alone, step by step."""
    from stocker_core.config import use_settings
    from stocker_core.evaluation.backtests import backtest_many
    from stocker_core.moderator.training import stored_episode_keys

    warehouse = Warehouse(trained.settings.warehouse_path)
    episodes = load_episodes(stored_episode_keys(warehouse)[:3], trained.settings, warehouse)
    names = ["moderator_base", "moderator_sft", "moderator_grpo"]
    with use_settings(trained.settings):
        batched = backtest_many(episodes, names, settings=trained.settings)
        alone = backtest_many(episodes, names, settings=trained.settings, vectorised=False)
    for fast, slow in zip(batched, alone, strict=True):
        assert not fast.failures and not slow.failures
        for a, b in zip(fast.runs, slow.runs, strict=True):
            assert (a.policy, a.method, b.method) == (b.policy, "batched", "per_step")
            assert list(a.traded) == list(b.traded)
            np.testing.assert_equal(a.metrics, b.metrics)
