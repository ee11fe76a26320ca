"""The fields head (``language_model.fields_head``, ``moderator.head_fit``): a pretrained moderator that
decides with a linear head over its prompt's value positions, fitted to the reward table,
trained with its LoRA, saved beside the adapter and played by everything that loads it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("peft")

from training_testing import pretrained_folder, seed_settings, tiny_config  # noqa: E402

from stocker_core.language_model.factory import LoadedModel, load_with_adapter  # noqa: E402
from stocker_core.language_model.fields_head import (  # noqa: E402
    HEAD_CONFIG,
    FieldsHead,
    attach,
    fit_projection,
    head_of,
    prompt_states,
    save_head,
    set_linear,
    truncate,
)
from stocker_core.language_model.frozen_prefix import adapted_from  # noqa: E402
from stocker_core.moderator.answers import ANSWERS, answer_logits, frozen_prefix  # noqa: E402
from stocker_core.moderator.config import TrainingConfigError, load_config  # noqa: E402
from stocker_core.moderator.head_fit import choose_alpha, ridge  # noqa: E402

BLOCKS = 3
SIGNED = [f"{s}{d}" for s in "+-" for d in range(10)]
COMPACT_WORDS = ["votes", "move", "invested", "pnl", "step", "action:", *SIGNED, *map(str, range(10))]


def compact_model_folder(folder: Path) -> Path:
    """A three-block Llama over the compact prompt's words, saved as a local model folder."""
    answers = ["hold", "buy", "sell", "q0", "q1", "q2", "q3", "q4"]
    return pretrained_folder(folder, COMPACT_WORDS + answers, BLOCKS)


def prompts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        votes = " ".join(f"{rng.choice(SIGNED)} {rng.integers(10)}" for _ in range(3))
        out.append(f"votes {votes} move {rng.choice(SIGNED)} invested {rng.integers(5)} step 3 action:")
    return out


@pytest.fixture()
def headed(tmp_path: Path) -> LoadedModel:
    """The base cut after block 2 with a LoRA on its top block and a head with random weights."""
    from peft import get_peft_model

    from stocker_core.language_model.factory import load_pretrained
    from stocker_core.language_model.lora import lora_config
    from stocker_core.moderator.answers import _prompt_ids

    config = load_config(model=str(compact_model_folder(tmp_path / "base")), lora_layers=1)
    loaded = load_pretrained(config.model)
    loaded.prompt_style = "compact"
    truncate(loaded.model, 2)
    loaded.model = get_peft_model(loaded.model, lora_config(config.lora_spec(), loaded))
    texts = prompts(12)
    ids = torch.tensor([_prompt_ids(loaded, p) for p in texts])
    positions = [i for i in range(ids.shape[1]) if len(set(ids[:, i].tolist())) > 1]
    head = FieldsHead(positions, 16, len(ANSWERS), layer=2)
    with torch.no_grad():
        states = prompt_states(loaded.model, ids)[:, positions].numpy()
    fit_projection(head, states)
    rng = np.random.default_rng(1)
    set_linear(head, rng.normal(size=(len(ANSWERS), len(positions))), rng.normal(size=len(ANSWERS)))
    attach(loaded.model, head, trainable=True)
    with torch.no_grad():  # a LoRA that is not zero, so a lost adapter would show
        for name, parameter in loaded.model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.1)
    return loaded


def test_the_head_scores_the_same_through_the_frozen_prefix_and_the_whole_model(headed):
    texts = prompts(12)
    assert len(headed.model.get_base_model().model.layers) == 2
    assert adapted_from(headed.model) == 1, "the head's weights do not hide the frozen block below"
    prefix = frozen_prefix(headed, texts)
    assert prefix is not None
    with torch.no_grad():
        whole = answer_logits(headed, texts)
        cached = prefix.logits(headed.model, list(range(len(texts))))
    assert whole.shape == (12, len(ANSWERS))
    torch.testing.assert_close(cached, whole, atol=1e-5, rtol=1e-5)
    # the scores are the head's: a linear map of each value position's projection
    manual = head_of(headed.model).linear(head_of(headed.model).project(_states(headed, texts)))
    torch.testing.assert_close(whole, torch.log_softmax(manual, dim=-1).detach(), atol=1e-5, rtol=1e-5)
    # log-probabilities: the reward regression's mass term cannot grow them all at once
    torch.testing.assert_close(torch.logsumexp(whole, dim=-1), torch.zeros(12), atol=1e-5, rtol=1e-5)


def _states(loaded: LoadedModel, texts: list[str]) -> torch.Tensor:
    from stocker_core.moderator.answers import _prompt_ids

    with torch.no_grad():
        return prompt_states(loaded.model, torch.tensor([_prompt_ids(loaded, p) for p in texts]))


def test_a_saved_head_comes_back_with_its_adapter_merged_or_not(headed, tmp_path):
    from stocker_core.language_model.factory import save_base

    texts = prompts(8, seed=3)
    with torch.no_grad():
        expected = answer_logits(headed, texts)
    base_dir = tmp_path / "saved_base"
    base = load_config(model=str(tmp_path / "base"))
    from stocker_core.language_model.factory import load_pretrained

    plain = load_pretrained(base.model)
    plain.prompt_style = "compact"
    save_base(plain, base_dir)
    headed.model.save_pretrained(tmp_path / "adapter")
    save_head(headed.model, tmp_path / "adapter")
    assert json.loads((tmp_path / "adapter" / HEAD_CONFIG).read_text())["layer"] == 2

    loaded = load_with_adapter(base_dir, tmp_path / "adapter")
    assert len(loaded.model.get_base_model().model.layers) == 2, "cut after the block the head reads"
    assert head_of(loaded.model) is not None and not head_of(loaded.model).linear.weight.requires_grad
    with torch.no_grad():
        torch.testing.assert_close(answer_logits(loaded, texts), expected, atol=1e-5, rtol=1e-5)
        loaded.model = loaded.model.merge_and_unload()
        torch.testing.assert_close(answer_logits(loaded, texts), expected, atol=1e-5, rtol=1e-5)
    trainable = load_with_adapter(base_dir, tmp_path / "adapter", trainable=True)
    assert head_of(trainable.model).linear.weight.requires_grad


def test_ridge_is_the_least_squares_minimiser_with_its_penalty():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    y = x @ rng.normal(size=(5, 3)) + 0.3 + rng.normal(scale=0.5, size=(200, 3))
    weight, bias = ridge(x, y, alpha=10.0)
    residual = x @ weight.T + bias - y
    # the gradient of |XW' + b - Y|^2 + alpha |W|^2 vanishes at the fit
    np.testing.assert_allclose(2 * residual.T @ x + 2 * 10.0 * weight, 0, atol=1e-8)
    np.testing.assert_allclose(residual.sum(axis=0), 0, atol=1e-8)
    unpenalised, _ = ridge(x, y, alpha=1e-9)
    assert np.abs(weight).sum() < np.abs(unpenalised).sum()


def test_the_penalty_is_chosen_on_the_later_train_days_by_reward():
    rng = np.random.default_rng(0)
    n = 300
    x = rng.normal(size=(n, 4))
    rewards = np.zeros((n, len(ANSWERS)))
    rewards[:, 1] = x[:, 0]  # buying pays what the first feature says
    dates = [f"2020-01-{1 + i // 10:02d}" for i in range(n)]
    alpha, inner = choose_alpha(x, rewards - rewards.mean(axis=1, keepdims=True), rewards, dates, False)
    assert set(inner) and inner[alpha] == max(inner.values()) and inner[alpha] > 0


def test_a_fields_head_decides_by_scores_not_by_generated_text():
    with pytest.raises(TrainingConfigError, match="fields_head"):
        load_config(readout="fields_head", decode="generate")


def test_the_cut_stays_inside_the_model(tmp_path):
    from stocker_core.language_model.factory import load_pretrained

    loaded = load_pretrained(str(compact_model_folder(tmp_path / "m")))
    with pytest.raises(ValueError, match="block 1..3"):
        truncate(loaded.model, 4)


def test_training_with_a_fields_head_end_to_end(tmp_path):
    """base -> head fit -> RL on the seed tasks: the head is saved with each adapter, trains in
    the RL stage, and the held-out plays read it."""
    from stocker_core.moderator.training import load_moderator, model_dir, train

    settings = seed_settings(tmp_path / "home")
    config = tiny_config(
        model=str(compact_model_folder(tmp_path / "base")),
        readout="fields_head",
        head_layer=2,
        lora_layers=1,
        grpo_steps=3,
    )
    heard: list[tuple[str, int, int]] = []
    reports = {r.stage: r for r in train(config, settings, progress=lambda *a: heard.append(a))}
    read = [(done, total) for stage, done, total in heard if stage == "sft" and total]
    assert read and read[-1][0] == read[-1][1], "the head's states are read with progress to the end"
    sft = reports["sft"].extra
    assert sft["teacher"] == "fields_head" and sft["head_layer"] == 2 and sft["value_positions"] > 0
    assert sft["ridge_alpha"] in [float(a) for a in sft["inner_rewards"]]
    for stage in ("sft", "grpo"):
        assert (model_dir(settings, stage) / HEAD_CONFIG).is_file()
        assert set(reports[stage].heldout["policy"]) >= {f"moderator_{stage}", "buy_and_hold"}
    sft_head = load_moderator(settings, "sft")
    grpo_head = load_moderator(settings, "grpo", merged=True)
    assert len(grpo_head.model.model.layers) == 2
    moved = head_of(grpo_head.model).linear.weight - head_of(sft_head.model).linear.weight
    assert float(moved.abs().max()) > 0, "the RL stage trains the head"
    assert reports["grpo"].extra["trainable_parameters"] > reports["sft"].extra["trainable_parameters"]
