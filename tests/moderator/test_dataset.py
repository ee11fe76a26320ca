"""Training rows: one per step, snapshots that restore the row's state, teacher targets."""

import json

import numpy as np
from training_testing import TRAIN

from stocker_core.env.ideal import ideal_trajectory
from stocker_core.moderator.dataset import episode_rows, target_path


def test_one_row_per_step_and_snapshots_restore_the_prompted_state(seed_data):
    per_episode = {key: [r for r in seed_data.rows if r["episode_key"] == key] for key in TRAIN}
    for key, rows in per_episode.items():
        env = seed_data.train_contexts[key].env
        assert [r["step"] for r in rows] == list(range(env.total_steps))
        for row in rows[::7]:
            obs = env.restore(json.loads(row["snapshot"]))
            assert obs.step == row["step"] and obs.date == row["date"]
            invested = obs.position * obs.close / obs.portfolio_value
            assert f"exposure e{round(invested * 4)}" in row["prompt_words"]


def test_targets_follow_the_ideal_path(seed_data):
    context = seed_data.train_contexts[TRAIN[0]]
    rows = episode_rows(context, state_path="ideal")
    long = context.env.ideal.long
    # along the ideal path itself the teacher buys at each flat->long step and sells at each
    # long->flat step, and holds everywhere else
    flips = np.flatnonzero(np.diff(np.r_[False, long].astype(int)))
    trades = [i for i, r in enumerate(rows) if r["target"] != "hold q0"]
    assert trades == list(flips)


def test_a_costlier_teacher_never_trades_more():
    closes = 100 * np.cumprod(1 + 0.01 * np.sin(np.arange(60) / 1.5))
    cheap = ideal_trajectory(closes, 0.001).trades
    dear = ideal_trajectory(closes, 0.02).trades
    assert dear <= cheap and cheap > 2


def test_target_path_defaults_to_the_environment_ideal(seed_data):
    env = seed_data.train_contexts[TRAIN[0]].env
    assert target_path(env) is env.ideal.long
    assert target_path(env, 0.05).sum() <= len(env.ideal.long)
