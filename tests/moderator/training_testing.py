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
