"""score_choices against a brute-force reference: one full forward pass per answer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import transformers

from stocker_core.council.backends import VOTE_VALUES
from stocker_core.language_model.choices import confidence_of, expected_value, score_choices


@pytest.fixture(scope="module")
def tiny_lm():
    torch.manual_seed(3)
    config = transformers.LlamaConfig(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    torch.nn.init.normal_(model.lm_head.weight, std=0.5)  # a peaked, non-uniform distribution

    class Tok:
        pad_token_id = 0

    return model, Tok()


def _reference(model, prompt, answers):
    scores = []
    for answer in answers:
        ids = torch.tensor([prompt + answer])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0].double(), dim=-1)
        scores.append(sum(float(logp[len(prompt) - 1 + j, tok]) for j, tok in enumerate(answer)))
    top = max(scores)
    w = np.exp(np.array(scores) - top)
    return w / w.sum()


def test_scores_match_full_forward_passes(tiny_lm):
    model, tok = tiny_lm
    prompt = [5, 9, 11, 3, 17, 22, 8]
    answers = [[4], [6, 7], [6, 7, 30], [12, 13, 14, 15], [39, 1]]  # unequal lengths: padded rows
    got = score_choices(model, tok, prompt, answers)
    want = _reference(model, prompt, answers)
    assert got.shape == (5,) and math.isclose(got.sum(), 1.0, rel_tol=1e-9)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert got.max() - got.min() > 0.01  # not trivially uniform


def test_single_token_answers_need_only_the_prefill(tiny_lm):
    model, tok = tiny_lm
    prompt = [2, 3, 4]
    got = score_choices(model, tok, prompt, [[10], [11], [12]])
    np.testing.assert_allclose(got, _reference(model, prompt, [[10], [11], [12]]), atol=1e-6)


def test_signal_and_confidence_from_the_distribution():
    assert expected_value([0, 0, 0, 0, 1], VOTE_VALUES) == 1.0
    assert expected_value([0.5, 0, 0, 0, 0.5], VOTE_VALUES) == 0.0
    assert math.isclose(expected_value([0.1, 0.2, 0.4, 0.2, 0.1], VOTE_VALUES), 0.0, abs_tol=1e-12)
    assert math.isclose(expected_value([0, 0, 0.5, 0.5, 0], VOTE_VALUES), 0.25)
    assert confidence_of([0.2] * 5) == pytest.approx(0.0, abs=1e-12)
    assert confidence_of([0, 0, 1, 0, 0]) == 1.0
    # two equally likely answers out of five: 1 - ln 2 / ln 5
    assert confidence_of([0.5, 0.5, 0, 0, 0]) == pytest.approx(1 - math.log(2) / math.log(5))


def test_bad_arguments_are_clear(tiny_lm):
    model, tok = tiny_lm
    with pytest.raises(ValueError, match="at least one answer"):
        score_choices(model, tok, [1, 2], [])
    with pytest.raises(ValueError, match="non-empty prompt"):
        score_choices(model, tok, [], [[1]])


def test_a_lora_wrapped_model_scores_alike_without_deprecation_warnings(tiny_lm):
    # a PEFT wrapper's forward takes **kwargs: the tree's 4-D mask and position ids pass through
    # it to the base model, with no deprecation warning on the way
    import copy
    import warnings

    from peft import LoraConfig, get_peft_model

    model, tok = tiny_lm
    wrapped = get_peft_model(
        copy.deepcopy(model), LoraConfig(r=2, target_modules=["q_proj", "v_proj"])
    ).eval()
    prompt, answers = [5, 9, 11, 3], [[4], [6, 7], [6, 7, 30]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        got = score_choices(wrapped, tok, prompt, answers)
    np.testing.assert_allclose(got, _reference(model, prompt, answers), atol=1e-5)  # LoRA B starts at 0
