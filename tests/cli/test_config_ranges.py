"""The moderator's and the agent's configurations refuse non-finite and out-of-range numbers
as the settings do (issue 43, item 2): one line naming the ``STOCKER_MODERATOR_*`` /
``STOCKER_AGENT_*`` variable when the value came from one, exit 2, nothing written."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from stocker_assets.cli import app
from stocker_core.agent.config import agent_config
from stocker_core.agent.errors import AgentError
from stocker_core.config import get_settings
from stocker_core.moderator.config import TrainingConfigError, load_config

MODERATOR = [
    ("STOCKER_MODERATOR_SFT_TEMPERATURE", "inf", "(expected a finite number above 0)"),
    ("STOCKER_MODERATOR_GRPO_LEARNING_RATE", "nan", "(expected a finite number above 0)"),
    ("STOCKER_MODERATOR_ENTROPY_COEF", "-inf", "(expected a finite number at least 0)"),
    ("STOCKER_MODERATOR_SEED", "-1", "(expected a number at least 0)"),
    ("STOCKER_MODERATOR_TINY_HEADS", "0", "(expected a number at least 1 and at most 256)"),
    ("STOCKER_MODERATOR_SFT_MAX_STEPS", "-5", "(expected a number at least -1)"),
]
AGENT = [
    ("STOCKER_AGENT_THETA", "nan", "(expected a finite number above 0 and below 0.5)"),
    ("STOCKER_AGENT_W_RESULT", "inf", "(expected a finite number at least 0)"),
    ("STOCKER_AGENT_TRANSACTION_COST", "-1", "(expected a number at least 0 and below 0.1)"),
    ("STOCKER_AGENT_TINY_LAYERS", "0", "(expected a number at least 1 and at most 64)"),
    ("STOCKER_AGENT_SEED", "-3", "(expected a number at least 0)"),
]


def _one_line(result, expected: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("name", "value", "words"), MODERATOR)
def test_a_bad_moderator_variable_is_named(name, value, words, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(name, value)
    get_settings(fresh=True)
    with pytest.raises(TrainingConfigError, match="bad training config: " + name):
        load_config()
    _one_line(CliRunner().invoke(app, ["train"]), f"{name}='{value}' {words}")
    assert not (tmp_path / "home").exists()
    monkeypatch.undo()
    get_settings(fresh=True)


@pytest.mark.parametrize(("name", "value", "words"), AGENT)
def test_a_bad_agent_variable_is_named(name, value, words, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(name, value)
    get_settings(fresh=True)
    with pytest.raises(AgentError, match="bad agent config: " + name):
        agent_config()
    _one_line(CliRunner().invoke(app, ["agent", "train"]), f"{name}='{value}' {words}")
    assert not (tmp_path / "home").exists()
    monkeypatch.undo()
    get_settings(fresh=True)


def test_values_given_in_code_name_their_field() -> None:
    with pytest.raises(TrainingConfigError, match=r"sft_temperature: expected a finite number above 0"):
        load_config(sft_temperature=math.inf)
    with pytest.raises(TrainingConfigError, match="must be a multiple of tiny_heads"):
        load_config(tiny_hidden_size=30, tiny_heads=4)
    with pytest.raises(AgentError, match=r"w_tool: expected a finite number at least 0"):
        agent_config(w_tool=math.nan)
    with pytest.raises(AgentError, match="must be a multiple of tiny_heads"):
        agent_config(tiny_hidden_size=30, tiny_heads=4)
