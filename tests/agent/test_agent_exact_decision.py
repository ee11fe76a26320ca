"""The agent's exact decision gradient: one update moves probability toward the decision
whose graded result is best, the tool turns left as they were."""

from __future__ import annotations

import torch
from agent_testing import DECISION_DAY

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.grpo import decision_loss
from stocker_core.agent.loop import run_decision
from stocker_core.agent.model import build_tiny_agent
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.rewards import score_trace
from stocker_core.agent.scripted import ScriptedWriter
from stocker_core.agent.sequences import encode_trace
from stocker_core.agent.tools import AgentTools
from stocker_core.language_model.policy_gradient import collate


def _decision_probabilities(loaded, trace, config) -> torch.Tensor:
    ids, mask = encode_trace(loaded, trace, [], config.max_tool_calls)
    decision_ids = loaded.tokenizer.convert_tokens_to_ids(list(DECISIONS))
    position = max(k for k, (t, m) in enumerate(zip(ids, mask, strict=True)) if m and t in decision_ids)
    batch = collate(loaded.tokenizer.pad_token_id, [(ids, mask)], loaded.device)
    with torch.no_grad():
        logits = loaded.model(input_ids=batch.input_ids).logits[0, position - 1]
    return torch.softmax(logits[decision_ids], dim=-1)


def test_one_update_favours_the_decision_that_avoids_a_fall(planted):
    config = AgentConfig(result_mode="graded", seed=0)
    torch.manual_seed(0)
    loaded = build_tiny_agent(config)
    trace = run_decision(ScriptedWriter(config), AgentTools(planted, DECISION_DAY), config, "agent_rl")
    score_trace(trace, -0.03, config)  # a 3% fall follows: SELL +1, HOLD +1 (clipped), BUY 0
    before = _decision_probabilities(loaded, trace, config)
    optimizer = torch.optim.SGD(loaded.model.parameters(), lr=5.0)
    loss = decision_loss(loaded, [trace], [], config)
    assert loss is not None
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    after = _decision_probabilities(loaded, trace, config)
    buy = DECISIONS.index("BUY")
    assert after[buy] < before[buy]  # the one decision that does not avoid the fall loses mass


def test_no_answer_no_exact_term(planted):
    config = AgentConfig()
    loaded = build_tiny_agent(config)
    trace = run_decision(ScriptedWriter(config), AgentTools(planted, DECISION_DAY), config, "agent_rl")
    trace.forward_return = None  # unscored (its label day lies past the data)
    assert decision_loss(loaded, [trace], [], config) is None
