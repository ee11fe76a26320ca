"""Training takes train-split episodes only: held-out (valid, test) days never reach the dataset."""

from datetime import date

import pytest
from conftest import TRAIN, VALID, seed_settings, tiny_config

from stocker_core.config import Settings
from stocker_core.env.episode import episode_from_closes
from stocker_core.training.pipeline import prepare_data
from stocker_core.training.selection import SplitLeakError, chronological_split, key_range
from stocker_core.warehouse.db import Warehouse


def test_no_held_out_day_reaches_the_training_rows(seed_data):
    held_out = [key_range(k, Settings(), "valid") for k in VALID]
    days = {r["date"] for r in seed_data.rows}
    assert {r["episode_key"] for r in seed_data.rows} == set(TRAIN)
    for span in held_out:
        assert not [d for d in days if span.first <= date.fromisoformat(d) <= span.last]


def test_the_builder_refuses_a_valid_split_episode(tmp_path):
    settings = seed_settings(tmp_path)
    config = tiny_config(train_episodes=[*TRAIN, VALID[0]])
    with pytest.raises(SplitLeakError, match="AAPL\\|2023-08-01.*valid split"):
        prepare_data(config, settings, Warehouse(settings.warehouse_path))


def test_chronological_split_keeps_gaps_and_the_guard_refuses_held_out_windows():
    settings = Settings(episode_months=2)
    keys = [f"ABC|{2020 + m // 12}-{m % 12 + 1:02d}-01" for m in range(20)]
    splits = chronological_split(keys, settings)
    # 20 months: train cut 14, valid cut 17; one month of gap plus one of episode length
    assert splits.train == keys[:12] and splits.valid == keys[14:15] and splits.test == keys[17:]
    last_train_end = key_range(splits.train[-1], settings, "train").last
    assert last_train_end < key_range(splits.valid[0], settings, "valid").first
    # a synthetic episode inside the test window is refused, one inside train passes
    test_start = key_range(splits.test[0], settings, "test").first
    with pytest.raises(SplitLeakError, match="test split"):
        splits.guard.check(episode_from_closes([10.0] * 20, "ABC", test_start))
    splits.guard.check(episode_from_closes([10.0] * 20, "ABC", date(2020, 1, 2)))
