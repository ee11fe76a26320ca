"""The learning check for any model: a pretrained moderator's recipe (LoRA on its top blocks, the
compact prompt), the agent only in the tiny check, the smoke budget, progress lines with ETA."""

from __future__ import annotations

from types import SimpleNamespace

from stocker_core.language_model.runtime import EtaProgress
from stocker_core.moderator.config import SMOKE, load_config, smoke
from stocker_core.moderator.learning_check import (
    POLICIES,
    PRETRAINED_MODERATOR,
    LearningCheckConfig,
)


def test_the_tiny_check_is_unchanged():
    config = LearningCheckConfig()
    assert config.model == "tiny" and not config.pretrained and config.trains_agent
    assert config.moderator_overrides() == config.moderator
    assert config.played() == POLICIES


def test_a_pretrained_check_adapts_the_top_blocks_and_skips_the_agent():
    config = LearningCheckConfig(model="smollm2")
    overrides = config.moderator_overrides()
    assert overrides["model"] == "smollm2" and overrides["lora_layers"] == PRETRAINED_MODERATOR["lora_layers"]
    assert overrides["grpo_steps"] == config.moderator["grpo_steps"]
    assert "agent_rl" not in config.played() and not config.trains_agent
    trained = load_config(**overrides)
    assert trained.model_spec().lora.layers == PRETRAINED_MODERATOR["lora_layers"]


def test_the_smoke_budget():
    config = smoke(load_config(model="smollm2"))
    assert config.model == "smollm2"
    assert all(getattr(config, k) == v for k, v in SMOKE.items())
    check = LearningCheckConfig(model="smollm2").smoke()
    assert check.moderator["grpo_steps"] == SMOKE["grpo_steps"]


def test_lora_on_the_last_blocks_only():
    from stocker_core.language_model.lora import LoraSpec, lora_config

    model = SimpleNamespace(config=SimpleNamespace(num_hidden_layers=30))
    smollm2 = SimpleNamespace(model=model, name="smollm2")
    top = lora_config(LoraSpec(layers=4), smollm2)
    assert list(top.layers_to_transform) == [26, 27, 28, 29] and top.modules_to_save is None
    every = lora_config(LoraSpec(), smollm2)
    assert every.layers_to_transform is None and every.target_modules == "all-linear"
    tiny = lora_config(LoraSpec(layers=4), SimpleNamespace(model=model, name="tiny"))
    assert tiny.layers_to_transform is None  # the tiny model trains all of itself
    assert tiny.modules_to_save == ["embed_tokens", "lm_head"]


def test_progress_lines_say_stage_step_and_eta():
    lines: list[str] = []
    progress = EtaProgress(lines.append, every=3600, prefix="moderator ")
    progress("base: loading", 0, 0)
    progress("sft", 0, 10)
    for step in range(1, 11):
        progress("sft", step, 10)
    assert lines[0] == "moderator base: loading …"
    assert lines[1] == "moderator sft: 10 steps"
    assert lines[2].startswith("moderator sft: step 1/10") and "ETA" in lines[2]
    assert lines[-1].startswith("moderator sft: step 10/10") and lines[-1].endswith("ETA 0 s")
    assert len(lines) == 4  # throttled between the first and the last step
