"""The one policy-gradient home and the excess training reward, on numbers worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stocker_core.language_model.policy_gradient import (
    PgLog,
    PgStep,
    expected_reward_weights,
    group_advantages,
    zero_spread_share,
)
from stocker_core.moderator.answers import ANSWERS
from stocker_core.moderator.rewards import buy_and_hold_exposure, excess_rewards


def test_group_advantages_and_zero_spread():
    adv = group_advantages([1.0, 3.0, 2.0, 2.0], 2)
    assert adv[0] == pytest.approx(-1.0, abs=1e-3) and adv[1] == pytest.approx(1.0, abs=1e-3)
    assert adv[2] == adv[3] == 0.0  # a group without spread carries no gradient
    assert zero_spread_share(np.array([[1.0, 3.0], [2.0, 2.0], [0.0, 0.0]])) == pytest.approx(2 / 3)


def test_the_surrogate_gives_the_exact_gradient_of_the_expected_reward():
    torch.manual_seed(0)
    logits = torch.randn(3, 9, requires_grad=True)
    rewards = torch.randn(3, 9)
    loss, _ = expected_reward_weights(logits, rewards, scale="none")
    loss.backward()
    # d/dz of mean_s sum_a softmax(z)_a R_a = pi * (R - pi.R) / n_states
    pi = torch.softmax(logits.detach(), dim=-1)
    expected = pi * (rewards - (pi * rewards).sum(-1, keepdim=True)) / 3
    assert torch.allclose(-logits.grad, expected, atol=1e-6)


def test_batch_scaling_changes_the_size_not_the_direction():
    logits = torch.zeros(2, 9, requires_grad=True)
    rewards = torch.linspace(-1, 1, 18).reshape(2, 9) * 1e-3
    loss, _ = expected_reward_weights(logits, rewards, scale="batch")
    loss.backward()
    raw = logits.grad.clone()
    logits.grad = None
    loss, _ = expected_reward_weights(logits, rewards, scale="none")
    loss.backward()
    cosine = torch.nn.functional.cosine_similarity(raw.flatten(), logits.grad.flatten(), dim=0)
    assert cosine == pytest.approx(1.0, abs=1e-6) and raw.abs().sum() > 100 * logits.grad.abs().sum()
    with pytest.raises(ValueError, match="scaling"):
        expected_reward_weights(logits, rewards, scale="group")


def test_excess_reward_by_hand():
    # all cash, price 100, cost 0.1%: buy q4 buys 99 shares for 9,909.90, leaving 90.10
    rewards = dict(zip(ANSWERS, excess_rewards(10_000.0, 0, 100.0, 0.01, 0.99, 0.001, ANSWERS), strict=True))
    e_buy = 9_900.0 / (9_900.0 + 90.1)
    assert rewards["hold q0"] == pytest.approx((0.0 - 0.99) * 0.01)
    assert rewards["buy q4"] == pytest.approx((e_buy - 0.99) * 0.01 - 0.001 * e_buy)
    assert rewards["sell q4"] == rewards["hold q0"]  # nothing to sell: a hold
    # fully invested before a 2% fall: selling everything avoids it, minus the cost
    rewards = dict(zip(ANSWERS, excess_rewards(90.1, 99, 100.0, -0.02, e_buy, 0.001, ANSWERS), strict=True))
    assert rewards["hold q0"] == pytest.approx(0.0)
    assert rewards["sell q4"] == pytest.approx((0.0 - e_buy) * -0.02 - 0.001 * e_buy)
    # the state drops out of the differences: every answer shares the -e_bh * r term
    spread = excess_rewards(10_000.0, 0, 100.0, 0.01, 0.5, 0.001, ANSWERS) - excess_rewards(
        10_000.0, 0, 100.0, 0.01, 0.99, 0.001, ANSWERS
    )
    assert np.allclose(spread, spread[0])


def test_buy_and_hold_exposure():
    exposure = buy_and_hold_exposure(np.array([100.0, 110.0]), 10_000.0, 0.001)
    assert exposure[0] == pytest.approx(9_900.0 / 9_990.1)
    assert exposure[1] == pytest.approx(99 * 110.0 / (90.1 + 99 * 110.0))


def test_log_series_last_tenth_and_tensorboard(tmp_path):
    log = PgLog(report_to=["tensorboard"], log_dir=tmp_path / "tb")
    for step in range(1, 21):
        log.add(
            PgStep(
                step,
                reward=step,
                frac_reward_zero_std=1.0 if step <= 18 else 0.0,
                loss=0.0,
                actions={"hold q0": 1.0},
            )
        )
    log.close()
    assert log.last_tenth("frac_reward_zero_std") == 0.0  # steps 19 and 20
    assert log.series("action/hold q0")[0] == (1, 1.0)
    assert any((tmp_path / "tb").iterdir())  # TensorBoard event file written offline


def test_scored_choices_read_the_answers_as_a_tree_without_changing_the_numbers():
    from stocker_core.language_model.factory import build_tiny
    from stocker_core.moderator.answers import answer_logits, full_sequence_logits
    from stocker_core.moderator.config import TrainingConfig
    from stocker_core.moderator.prompts import vocabulary

    torch.manual_seed(0)
    loaded = build_tiny(TrainingConfig().model_spec())
    words = vocabulary()
    prompts = [" ".join(words[i : i + 30]) for i in (0, 7, 19)]
    fast = answer_logits(loaded, prompts)
    slow = full_sequence_logits(loaded, prompts)
    assert fast.shape == (3, 9) and torch.allclose(fast, slow, atol=1e-4)
    # the gradients too: the tree is what trains the moderator
    fast.sum().backward()
    tree_grads = [p.grad.clone() for p in loaded.model.parameters() if p.grad is not None]
    loaded.model.zero_grad()
    slow.sum().backward()
    whole_grads = [p.grad for p in loaded.model.parameters() if p.grad is not None]
    assert len(tree_grads) == len(whole_grads) > 0
    assert all(torch.allclose(a, b, atol=1e-4) for a, b in zip(tree_grads, whole_grads, strict=True))


def test_answer_tree_by_hand():
    from stocker_core.language_model.choices import answer_tree

    # prompt of 2 tokens; answers [5, 7, 9] and [5, 8, 9] share their first token
    tree = answer_tree(2, [[5, 7, 9], [5, 8, 9]])
    assert tree.tokens == [5, 7, 8]  # nodes (5), (5, 7), (5, 8): each proper prefix once
    assert tree.positions == [0, 1, 2, 3, 3]  # both second tokens sit at depth 1 after the prompt
    assert tree.reads == [[1, 2, 3], [1, 2, 4]]  # prompt end -> 5, node (5) -> 7 or 8, node (5, x) -> 9
    assert tree.mask.int().tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [1, 1, 1, 1, 0],
        [1, 1, 1, 0, 1],  # (5, 8) sees the prompt, (5) and itself, not its sibling (5, 7)
    ]
