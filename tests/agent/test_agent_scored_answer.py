"""The agent's final decision read as scored choices: it always parses."""

from __future__ import annotations

import numpy as np
import pytest
from agent_testing import DECISION_DAY

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.loop import run_decision
from stocker_core.agent.model import ModelWriter, build_tiny_agent, prompt_text
from stocker_core.agent.parsing import DECISIONS, parse_turn
from stocker_core.agent.tools import AgentTools
from stocker_core.language_model.choices import score_choices


@pytest.fixture(scope="module")
def loaded():
    return build_tiny_agent(AgentConfig(max_new_tokens=12))


def test_untrained_model_always_decides_with_scored_answers(loaded, planted):
    config = AgentConfig(max_new_tokens=12, max_turns=3)
    writer = ModelWriter(loaded, config)
    assert writer.scored_answer  # greedy writers score; sampled RL rollouts do not
    assert not ModelWriter(loaded, config, sample=True).scored_answer
    trace = run_decision(writer, AgentTools(planted, DECISION_DAY), config, "t")
    assert trace.decision in DECISIONS
    last = [t for t in trace.turns if t.role == "assistant"][-1]
    assert parse_turn(last.text).decision == trace.decision


def test_scored_decision_is_the_most_likely_answer(loaded, planted):
    config = AgentConfig(max_new_tokens=12, max_turns=2)
    writer = ModelWriter(loaded, config)
    trace = run_decision(writer, AgentTools(planted, DECISION_DAY), config, "t")
    before = type(trace)(trace.ticker, trace.date, trace.policy, trace.turns[:-1])
    text = trace.turns[-1].text
    head = text[: text.lower().find("<answer>") + len("<answer>")]
    prompt = prompt_text(loaded, before, writer.tools, config.max_tool_calls)
    ids = loaded.tokenizer(prompt + " " + head, add_special_tokens=True)["input_ids"]
    p = score_choices(loaded.model, loaded.tokenizer, ids, [f" {d} </answer>" for d in DECISIONS])
    assert trace.decision == DECISIONS[int(np.argmax(p))]
