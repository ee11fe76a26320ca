"""Fixtures of tests/training; the helpers they use live in training_testing.py (importable by name)."""

import pytest
from training_testing import SeedRun, seed_settings, tiny_config


@pytest.fixture(scope="session")
def seed_data(tmp_path_factory: pytest.TempPathFactory):
    """Training data of the seed tasks (votes computed once by the rule council)."""
    from stocker_core.moderator.training import prepare_data
    from stocker_core.warehouse.db import Warehouse

    settings = seed_settings(tmp_path_factory.mktemp("seed_data"))
    return prepare_data(tiny_config(), settings, Warehouse(settings.warehouse_path))


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> SeedRun:
    """base -> SFT -> GRPO (3 steps) on the seed tasks in a temp STOCKER_HOME."""
    from stocker_core.moderator.training import train

    settings = seed_settings(tmp_path_factory.mktemp("trained"))
    config = tiny_config()
    return SeedRun(settings, config, train(config, settings))
