"""Linear probes of the best answer on frozen features (``moderator.probes``) and every layer's
readouts of fixed-length prompts (``language_model.layer_features``): a planted signal is read back, the
split is chronological, and the readouts are the states the frozen prefix caches."""

from __future__ import annotations

import random

import numpy as np
import pytest

from stocker_core.moderator.probes import (
    best_answer_probe,
    chosen_reward,
    chronological_split,
    day_clustered_se,
    reward_probe,
)


def _planted(n: int = 600, width: int = 30, seed: int = 0):
    """States whose first feature's sign says which of three answers pays, in noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, width))
    rewards = rng.normal(scale=0.5, size=(n, 3))
    rewards[:, 1] += np.where(x[:, 0] > 0, 1.0, -1.0)
    rewards[:, 2] += np.where(x[:, 0] > 0, -1.0, 1.0)
    dates = [f"2024-01-{1 + i // 20:02d}" for i in range(n)]
    return x, rewards, dates


def test_split_is_chronological_by_whole_days():
    dates = ["2024-01-03", "2024-01-01", "2024-01-02", "2024-01-01", "2024-01-03", "2024-01-02"]
    fit, held = chronological_split(dates)
    assert not (fit & held).any() and (fit | held).all()
    assert max(np.array(dates)[fit]) < min(np.array(dates)[held])
    with pytest.raises(ValueError):
        chronological_split(["2024-01-01"] * 3)


@pytest.mark.parametrize("probe", [reward_probe, best_answer_probe])
def test_probes_read_a_planted_signal_and_not_noise(probe):
    x, rewards, dates = _planted()
    fit, held = chronological_split(dates)
    fitted = probe(x[fit], rewards[fit], np.asarray(dates)[fit])
    best = chosen_reward(rewards[held], np.where(x[held, 0] > 0, 1, 2))
    assert chosen_reward(rewards[held], fitted.choose(x[held])) > 0.8 * best
    noise = np.random.default_rng(1).normal(size=x.shape)  # the same rewards, features without the signal
    blind = probe(noise[fit], rewards[fit], np.asarray(dates)[fit])
    assert chosen_reward(rewards[held], blind.choose(noise[held])) < 0.5 * best


def test_day_clustered_se_counts_days_not_states():
    values = np.repeat([1.0, 2.0, 3.0], 50)
    dates = np.repeat(["a", "b", "c"], 50)
    assert day_clustered_se(values, dates) == pytest.approx(np.std([1, 2, 3], ddof=1) / np.sqrt(3))


def test_readouts_are_the_frozen_prefix_states():
    torch = pytest.importorskip("torch")
    from stocker_core.language_model.factory import tiny_llama
    from stocker_core.language_model.frozen_prefix import FrozenPrefix
    from stocker_core.language_model.layer_features import layer_readouts, varying_positions
    from stocker_core.language_model.tiny_model import TinyModelSpec
    from stocker_core.language_model.tokenizer import build_word_tokenizer

    tokenizer = build_word_tokenizer([f"w{i}" for i in range(40)])
    sizes = TinyModelSpec(hidden_size=32, intermediate_size=64, layers=3, heads=4)
    model = tiny_llama(tokenizer, sizes, seed=3, context=64)
    rng = random.Random(0)
    heads = [[4, 5, rng.randrange(6, 40), 6, rng.randrange(6, 40), 7] for _ in range(5)]
    assert varying_positions(heads) == [2, 4]
    found = layer_readouts(model, heads, chunk=2)
    assert found.layers == 3 and found.fields == [2, 4]
    assert found.features["last"].shape == (4, 5, 32)
    assert found.features["fields"].shape == (4, 5, 64)
    for start in (1, 2):  # below the final norm, layer k is what enters block k
        entering = FrozenPrefix.build(model, heads, [[8, 2], [9, 2]], start, "cpu").hidden[:, :6].numpy()
        np.testing.assert_allclose(found.features["last"][start], entering[:, -1], atol=1e-5)
        np.testing.assert_allclose(found.features["mean"][start], entering.mean(axis=1), atol=1e-5)
        np.testing.assert_allclose(
            found.features["fields"][start], entering[:, [2, 4]].reshape(5, -1), atol=1e-5
        )
    with torch.no_grad():
        embedded = model.model.embed_tokens(torch.tensor(heads)).numpy()
    np.testing.assert_allclose(found.features["mean"][0], embedded.mean(axis=1), atol=1e-6)
    with pytest.raises(ValueError):
        layer_readouts(model, [[4, 5], [4, 5, 6]])


def test_readouts_round_trip_through_a_folder(tmp_path):
    from stocker_core.language_model.layer_features import LayerReadouts

    assert LayerReadouts.load(tmp_path) is None
    found = LayerReadouts(
        {k: np.ones((2, 3, 4), dtype=np.float32) for k in ("last", "mean", "fields")}, [1, 3]
    )
    found.save(tmp_path)
    back = LayerReadouts.load(tmp_path)
    assert back is not None and back.fields == [1, 3] and back.layers == 1
    np.testing.assert_array_equal(back.features["mean"], found.features["mean"])


def test_direction_probe_reads_a_planted_sign():
    from stocker_core.moderator.probes import direction_probe

    x, _, dates = _planted()
    wanted = x[:, 0] > 0
    fit, held = chronological_split(dates)
    fitted = direction_probe(x[fit], wanted[fit], np.asarray(dates)[fit])
    assert np.mean(fitted.choose(x[held]) == wanted[held]) > 0.9
    assert fitted.inner_reward > 0.8
