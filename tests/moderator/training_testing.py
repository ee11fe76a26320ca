"""Shared fixtures of the training tests: the seed tasks (META and INTC train, AAPL held
out) with rule votes, and one tiny training run reused by several tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stocker_testing import SEED_DIR

from stocker_core.config import Settings
from stocker_core.moderator.config import TrainingConfig

TRAIN = ["META|2022-09-01", "INTC|2024-01-01"]
VALID = ["AAPL|2023-08-01"]


def tiny_config(**changes: object) -> TrainingConfig:
    """A config small enough for a test: a few SFT epochs, a few GRPO steps."""
    values: dict[str, object] = {
        "train_episodes": TRAIN,
        "valid_episodes": VALID,
        "sft_epochs": 12.0,
        "grpo_steps": 3,
        "grpo_prompts": 16,
        "logging_steps": 1,
    }
    values.update(changes)
    return TrainingConfig(**values)


def seed_settings(home: Path) -> Settings:
    return Settings(home=home, source="files", files_dir=SEED_DIR)


@dataclass
class SeedRun:
    settings: Settings
    config: TrainingConfig
    reports: list


def pretrained_folder(folder: Path, words: list[str], blocks: int) -> Path:
    """A small Llama over ``words`` saved as a local model folder: ``TrainingConfig.model``
    takes it as a pretrained model (LoRA only, embeddings and head frozen)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from stocker_core.language_model.tokenizer import build_word_tokenizer

    tokenizer = build_word_tokenizer(words)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=blocks,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
