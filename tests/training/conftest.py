"""Shared fixtures of the training tests: the seed tasks (META and INTC train, AAPL held
out) with rule votes, and one tiny training run reused by several tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from stocker_testing import SEED_DIR

from stocker_core.config import Settings
from stocker_core.training.config import TrainingConfig

TRAIN = ["META|2022-09-01", "INTC|2024-01-01"]
VALID = ["AAPL|2023-08-01"]


def tiny_config(**changes: object) -> TrainingConfig:
    """A config small enough for a test: a few SFT epochs, a few GRPO steps."""
    values: dict[str, object] = {
        "train_episodes": TRAIN,
        "valid_episodes": VALID,
        "sft_epochs": 12.0,
        "grpo_steps": 3,
        "grpo_batch_size": 8,
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


@pytest.fixture(scope="session")
def seed_data(tmp_path_factory: pytest.TempPathFactory):
    """Training data of the seed tasks (votes computed once by the rule council)."""
    from stocker_core.training.pipeline import prepare_data
    from stocker_core.warehouse.db import Warehouse

    settings = seed_settings(tmp_path_factory.mktemp("seed_data"))
    return prepare_data(tiny_config(), settings, Warehouse(settings.warehouse_path))


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> SeedRun:
    """base -> SFT -> GRPO (3 steps) on the seed tasks in a temp STOCKER_HOME."""
    from stocker_core.training.pipeline import train

    settings = seed_settings(tmp_path_factory.mktemp("trained"))
    config = tiny_config()
    return SeedRun(settings, config, train(config, settings))
