"""Training takes train-split episodes only: held-out (valid, test) days never reach the dataset."""

from datetime import date

import pytest
from training_testing import TRAIN, VALID, seed_settings, tiny_config

from stocker_core.config import Settings
from stocker_core.env.episode import episode_from_closes
from stocker_core.moderator.selection import SplitLeakError, chronological_split, key_range
from stocker_core.moderator.training import prepare_data
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


def _store_splits(settings):
    from stocker_core.evaluation.splits import SplitRange, Splits, save_splits

    ranges = []
    for ticker, train_end, test_start in (
        ("AAPL", "2023-05-31", "2023-08-01"),
        ("META", "2022-12-31", "2023-03-01"),
        ("INTC", "2024-03-31", "2024-06-01"),
    ):
        t_end, s_start = date.fromisoformat(train_end), date.fromisoformat(test_start)
        ranges += [
            SplitRange(ticker, "train", date(2020, 1, 2), t_end, 100, 0),
            SplitRange(
                ticker,
                "valid",
                date.fromordinal(t_end.toordinal() + 20),
                date.fromordinal(s_start.toordinal() - 20),
                20,
                30,
            ),
            SplitRange(ticker, "test", s_start, date(2024, 12, 31), 100, 30),
        ]
    warehouse = Warehouse(settings.warehouse_path)
    save_splits(warehouse, Splits(tuple(ranges)))
    return warehouse


def test_stored_evaluation_splits_choose_episodes_and_refuse_test_days(tmp_path):
    from stocker_core.moderator.selection import select_episodes
    from stocker_core.moderator.training import load_episodes

    settings = seed_settings(tmp_path)
    warehouse = _store_splits(settings)
    keys = [*TRAIN, *VALID]

    def days_of(chosen):
        return {ep.key: list(ep.dates) for ep in load_episodes(chosen, settings, warehouse)}

    splits = select_episodes(settings, available=keys, warehouse=warehouse, days_of=days_of)
    assert splits.train == TRAIN and splits.valid == [] and splits.test == VALID
    (aapl,) = load_episodes(VALID, settings, warehouse)
    with pytest.raises(SplitLeakError, match="test split"):
        splits.guard.check(aapl)
    with pytest.raises(SplitLeakError, match="AAPL"):
        prepare_data(tiny_config(train_episodes=[*TRAIN, *VALID], valid_episodes=[]), settings, warehouse)
