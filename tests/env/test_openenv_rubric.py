"""The step reward as an OpenEnv rubric: over whole episodes (invalid orders, the final step's
alpha bonus and drawdown penalty included) the rubric's score is the served reward, and its
named terms add up to the unclipped sum."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from stocker_core.env.rewards import RewardParams, reward_terms
from stocker_core.env.server import SESSION_HEADER, create_app

pytest.importorskip("openenv.core.rubrics", reason="pip install --no-deps openenv==0.10.0 (the dev extra)")


def _orders(step: int) -> dict:
    if step % 7 == 3:
        return {"side": "sell", "quantity": 10_000}  # more than held: invalid
    return {"side": "buy", "quantity": 3} if step % 2 == 0 else {"side": "hold", "quantity": 0}


@pytest.mark.parametrize("task", ["task_easy", "task_hard"])
def test_rubric_scores_equal_the_served_rewards(seed_settings, task):
    from stocker_core.env.openenv_rubric import reward_rubric

    params = RewardParams.from_settings(seed_settings)
    rubric = reward_rubric(params)
    names = [name for name, _ in rubric.named_rubrics()]
    assert names == [spec["name"] for spec in reward_terms(params)]
    with TestClient(create_app(seed_settings, api_key="")) as client:
        start = client.post("/reset", json={"task_id": task}).json()
        sid, done, step, invalid = start["session_id"], False, 0, 0
        with pytest.raises(ValueError, match="no reward breakdown"):
            rubric(None, start)
        while not done:
            order = _orders(step)
            answer = client.post("/step", json=order, headers={SESSION_HEADER: sid}).json()
            assert rubric(order, answer) == pytest.approx(answer["reward"], abs=1e-12)
            parts = sum(r.last_score for _, r in rubric.named_rubrics())
            assert parts == pytest.approx(answer["metadata"]["breakdown"]["raw"], abs=1e-12)
            invalid += answer["metadata"]["breakdown"]["invalid_penalty"] > 0
            done, step = answer["done"], step + 1
        assert invalid > 0 and rubric.drawdown.last_score <= 0.0 <= rubric.alpha_bonus.last_score
    metadata = TestClient(create_app(seed_settings, api_key="")).get("/metadata").json()
    assert metadata["reward_rubric"]["terms"] == reward_terms(params)
