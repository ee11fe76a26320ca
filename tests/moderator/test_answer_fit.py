"""The reward-table fit: the soft-target loss's gradient, the checkpoint chosen on valid, and a
tiny model that learns a planted one-word rule from noisy rewards."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stocker_core.language_model.factory import build_tiny
from stocker_core.language_model.lora import lora_config
from stocker_core.language_model.policy_gradient import expected_reward_weights, soft_target_loss
from stocker_core.moderator.answer_fit import AnswerSet, FitSettings, fit_answers, reward_scale
from stocker_core.moderator.answers import ANSWERS, answer_probabilities
from stocker_core.moderator.config import TrainingConfig


def test_the_soft_target_gradient_is_pi_minus_target_and_does_not_fade_when_confidently_wrong():
    logits = torch.tensor([[8.0, 0.0, 0.0]], requires_grad=True)  # sure of answer 0, the worst
    rewards = torch.tensor([[-1.0, 1.0, 0.0]])
    loss, pi = soft_target_loss(logits, rewards, temperature=0.5, renormalize=True)
    loss.backward()
    target = torch.softmax(rewards / 0.5, dim=-1)
    assert torch.allclose(logits.grad, pi - target, atol=1e-6)
    ce_push = logits.grad.abs().sum()
    logits.grad = None
    pg, _ = expected_reward_weights(logits, rewards, scale="none")
    pg.backward()
    # the expected-reward gradient weights the state by about pi(1 - pi): ~1e-3 here
    assert ce_push > 1.0 and logits.grad.abs().sum() < 0.01


def test_without_renormalizing_the_answers_own_likelihood_is_raised():
    # three answers among a larger vocabulary: log-probabilities of a 5-way softmax
    vocab = torch.zeros(1, 5, requires_grad=True)
    answers = torch.log_softmax(vocab, dim=-1)[:, :3]
    loss, pi = soft_target_loss(answers, torch.tensor([[1.0, 0.0, 0.0]]), temperature=1.0)
    loss.backward()
    assert torch.allclose(pi, torch.full((1, 3), 1 / 3))
    # the two tokens outside the answer set lose probability, the answers gain it
    assert (vocab.grad[0, 3:] > 0).all() and vocab.grad[0, :3].sum() < 0


def test_reward_scale_is_the_spread_within_states():
    rewards = np.array([[0.0, 2.0], [10.0, 12.0]])  # state levels differ, answers differ by 2
    assert reward_scale(rewards) == pytest.approx(1.0)
    assert reward_scale(np.zeros((3, 9))) == 1.0


def _planted(n: int, rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
    """Prompts of the tiny grammar whose news word (p5 / m5) tilts which side pays, under noise."""
    from stocker_core.moderator.prompts import ROLE_NAMES

    prompts, rewards = [], []
    buy, sell = ANSWERS.index("buy q4"), ANSWERS.index("sell q4")
    for _ in range(n):
        up = rng.random() < 0.5
        votes = " ".join(
            f"{r} {'p5' if (r == 'news' and up) else 'm5' if r == 'news' else 'p0'} c5" for r in ROLE_NAMES
        )
        prompts.append(f"{votes} move d+0 exposure e2 pnl g+0 step t{rng.integers(10)} action")
        row = rng.normal(0.0, 1.0, len(ANSWERS)) * 0.5
        row[buy] += 1.0 if up else -1.0
        row[sell] += -1.0 if up else 1.0
        rewards.append(row)
    return prompts, np.asarray(rewards)


def test_a_tiny_model_learns_a_planted_word_and_keeps_the_best_valid_checkpoint():
    from peft import get_peft_model

    rng = np.random.default_rng(0)
    config = TrainingConfig(seed=0)
    policy = build_tiny(config.model_spec())
    policy.model = get_peft_model(policy.model, lora_config(config.lora_spec(), policy))
    train = AnswerSet(*_planted(256, rng))
    valid = AnswerSet(*_planted(64, rng))
    settings = FitSettings("soft_target", 0.5, steps=40, batch=32, learning_rate=3e-3, seed=0, eval_every=10)
    result = fit_answers(policy, train, settings, valid)
    assert [s for s, _ in result.valid_curve] == [0, 10, 20, 30, 40]
    best = max(score for _, score in result.valid_curve)
    assert result.best_valid == best
    # the kept checkpoint is the one in the model now
    assert valid.greedy_reward(answer_probabilities(policy, valid.prompts)) == pytest.approx(best)
    assert best > 0.5  # the planted side's mean reward is +1 (the other side -1, the rest 0)


def test_a_fit_that_keeps_an_earlier_check_hands_on_its_last_weights():
    """SFT publishes its best valid check; the RL stage continues from where the fit ended."""
    from peft import get_peft_model

    from stocker_core.language_model.checkpoints import restore_trainable, trainable_state

    rng = np.random.default_rng(0)
    config = TrainingConfig(seed=0)
    policy = build_tiny(config.model_spec())
    policy.model = get_peft_model(policy.model, lora_config(config.lora_spec(), policy))
    train = AnswerSet(*_planted(256, rng))
    # a valid split whose rewards are the reverse of train's: the untrained start scores best
    prompts, rewards = _planted(64, rng)
    valid = AnswerSet(prompts, -rewards)
    settings = FitSettings(
        "reward_regression", 1.0, steps=30, batch=32, learning_rate=3e-3, seed=0, eval_every=10, averaging=0.9
    )
    result = fit_answers(policy, train, settings, valid)
    assert result.best_step < 30 and result.last_state is not None
    kept = answer_probabilities(policy, valid.prompts)
    assert valid.greedy_reward(kept) == pytest.approx(result.best_valid)
    kept_state = trainable_state(policy.model)
    assert any(not torch.equal(kept_state[k], v) for k, v in result.last_state.items())
    restore_trainable(policy.model, result.last_state)
    last = valid.greedy_reward(answer_probabilities(policy, valid.prompts))
    assert last == pytest.approx(dict(result.valid_curve)[30]) and last < result.best_valid

    state = trainable_state(policy.model)
    keep_last = FitSettings(**{**settings.__dict__, "keep_last": True, "steps": 10})
    last_kept = fit_answers(policy, train, keep_last, valid)
    assert last_kept.best_step == 10 and last_kept.last_state is None
    assert any(not torch.equal(state[k], v) for k, v in trainable_state(policy.model).items())
