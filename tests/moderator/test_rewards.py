"""The GRPO reward equals the environment's own reward for the same action and state."""

import json

import pytest

from stocker_core.env.environment import TradingEnv
from stocker_core.moderator.prompts import parse_completion
from stocker_core.moderator.rewards import RewardInputError, RolloutReward, completion_text

COMPLETIONS = ["buy q4", "buy q1", "sell q2", "sell q4", "hold q0"]


def _replayed_env(context, snapshot: dict) -> TradingEnv:
    """A fresh environment of the same episode brought to the snapshot by replaying its actions."""
    env = TradingEnv(context.env.episode, context.env.params)
    env.reset()
    for side, qty in snapshot["actions"]:
        env.step({"side": ("hold", "buy", "sell")[side], "quantity": qty})
    return env


def _env_reward(context, snapshot: dict, completion: str, k: int) -> float:
    env = _replayed_env(context, snapshot)
    obs = env.observation()
    action = parse_completion(
        completion, obs.cash, obs.position, obs.close, env.params.transaction_cost
    ).action
    total = env.step(action).reward
    for _ in range(k):
        if env.done:
            break
        total += env.step({"side": "hold", "quantity": 0}).reward
    return total


@pytest.mark.parametrize("k", [0, 5])
def test_training_reward_equals_the_environment_reward(seed_data, k):
    reward = RolloutReward(seed_data.train_contexts, k=k, continuation="hold")
    rows = seed_data.rows[::9]  # every 9th step of both train episodes, last steps included below
    rows += [r for r in seed_data.rows if r["step"] >= 40]
    for row in rows:
        snapshot = json.loads(row["snapshot"])
        context = seed_data.train_contexts[row["episode_key"]]
        for completion in COMPLETIONS:
            expected = _env_reward(context, snapshot, completion, k)
            assert reward.score(row["episode_key"], row["snapshot"], completion) == expected


def test_reward_depends_on_the_action(seed_data):
    reward = RolloutReward(seed_data.train_contexts, k=5, continuation="rule")
    spreads = []
    for row in seed_data.rows:
        scores = {c: reward.score(row["episode_key"], row["snapshot"], c) for c in COMPLETIONS}
        spreads.append(max(scores.values()) - min(scores.values()))
    assert sum(s > 1e-6 for s in spreads) > 0.8 * len(spreads)


def test_unparsable_completion_is_hold_minus_the_penalty(seed_data):
    reward = RolloutReward(seed_data.train_contexts, k=5, continuation="rule", unparsable_penalty=1.0)
    row = seed_data.rows[10]
    hold = reward.score(row["episode_key"], row["snapshot"], "hold q0")
    assert reward.score(row["episode_key"], row["snapshot"], "no idea") == pytest.approx(hold - 1.0)
    assert reward.unparsable == 1


def test_trl_call_shape_and_chat_completions(seed_data):
    reward = RolloutReward(seed_data.train_contexts, k=2)
    rows = seed_data.rows[:2]
    values = reward(
        prompts=["p", "p"],
        completions=[[{"role": "assistant", "content": "buy q4"}], "sell q1"],
        episode_key=[r["episode_key"] for r in rows],
        snapshot=[r["snapshot"] for r in rows],
        trainer_state=None,
    )
    assert values == [
        reward.score(rows[0]["episode_key"], rows[0]["snapshot"], "buy q4"),
        reward.score(rows[1]["episode_key"], rows[1]["snapshot"], "sell q1"),
    ]
    assert completion_text([{"role": "assistant", "content": "hold q0"}]) == "hold q0"
    with pytest.raises(RewardInputError, match="no environment"):
        reward.score("AAPL|2023-08-01", rows[0]["snapshot"], "hold q0")
