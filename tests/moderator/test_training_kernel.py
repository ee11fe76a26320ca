"""The pieces both learners share from the language-model floor: one block of tiny-model fields
and one of LoRA fields (each config with its own defaults, the same bounds, the same variable
names) and one forward return over a horizon with one allowed range."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from stocker_core.agent.config import AgentConfig
from stocker_core.language_model.forward_return import MAX_HORIZON, check_horizon, forward_return
from stocker_core.language_model.lora import LoraFields, LoraSpec
from stocker_core.language_model.tiny_model import TinyModelFields, TinyModelSpec
from stocker_core.moderator.config import TrainingConfig

BLOCK_FIELDS = [*TinyModelFields.model_fields, *LoraFields.model_fields]


def test_both_configs_take_the_blocks_with_their_own_defaults() -> None:
    assert issubclass(TrainingConfig, TinyModelFields) and issubclass(TrainingConfig, LoraFields)
    assert issubclass(AgentConfig, TinyModelFields) and issubclass(AgentConfig, LoraFields)
    assert TrainingConfig().tiny_model_spec() == TinyModelSpec() == TinyModelSpec(128, 256, 2, 4)
    assert TrainingConfig().lora_spec() == LoraSpec() == LoraSpec(r=16, alpha=32, dropout=0.0, layers=0)
    assert AgentConfig().tiny_model_spec() == TinyModelSpec(hidden_size=96, intermediate_size=192)
    assert AgentConfig().lora_spec() == LoraSpec(r=8, alpha=16)
    for name in BLOCK_FIELDS:  # one declaration: the same type, bounds and description in both
        moderator, agent = TrainingConfig.model_fields[name], AgentConfig.model_fields[name]
        assert (moderator.annotation, moderator.metadata, moderator.description) == (
            agent.annotation,
            agent.metadata,
            agent.description,
        )


def test_the_blocks_keep_their_variables_and_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOCKER_AGENT_TINY_HIDDEN_SIZE", "64")
    monkeypatch.setenv("STOCKER_MODERATOR_LORA_LAYERS", "3")
    assert AgentConfig().tiny_model_spec().hidden_size == 64
    assert TrainingConfig().model_spec().lora.layers == 3
    with pytest.raises(ValidationError, match="must be a multiple of tiny_heads"):
        AgentConfig(tiny_hidden_size=30, tiny_heads=4)
    with pytest.raises(ValidationError, match="less than or equal to 512"):
        TrainingConfig(lora_layers=513)
    with pytest.raises(TypeError, match="no field tiny_width"):
        TinyModelFields.with_defaults(tiny_width=3)


def test_the_forward_return_and_its_one_range() -> None:
    closes = np.array([100.0, 101.0, 99.0, 110.0])
    assert forward_return(closes, 0, 1) == pytest.approx(0.01)
    assert forward_return(closes, 1, 2) == float(closes[3] / closes[1] - 1.0)
    assert forward_return(closes, 1, 3) is None  # the closes end first
    assert check_horizon(MAX_HORIZON) == MAX_HORIZON
    for bad in (0, MAX_HORIZON + 1):
        with pytest.raises(ValueError, match=f"1 to {MAX_HORIZON} sessions"):
            forward_return(closes, 0, bad)
    for config, field in ((TrainingConfig, "reward_horizon"), (AgentConfig, "horizon")):
        bounds = {type(b).__name__: b for b in config.model_fields[field].metadata}
        assert (bounds["Ge"].ge, bounds["Le"].le) == (1, MAX_HORIZON)
