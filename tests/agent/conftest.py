"""Fixtures of tests/agent; the helpers they use live in agent_testing.py (importable by name)."""

import pytest
from agent_testing import planted_bars, planted_macro, planted_text

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.data import AgentData


@pytest.fixture
def planted() -> AgentData:
    return AgentData("SYN", planted_bars(), planted_text(), planted_macro(), source="test")


@pytest.fixture
def config() -> AgentConfig:
    return AgentConfig()
