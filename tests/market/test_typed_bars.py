"""Bars that arrive typed (float prices, tz-naive dates, days in order) take the short way
through ``normalize_bars_checked``: the same frame and issues as the same values read as text."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from stocker_core.market.frames import normalize_bars_checked


def _bars(shuffle: bool, repeat: bool, blank_close: bool) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    days = pd.bdate_range("2023-01-02", periods=25)
    frame = pd.DataFrame(
        {
            "Date": days,
            "Open": rng.random(25),
            "High": rng.random(25),
            "Low": rng.random(25),
            "Close": rng.random(25),
            "Volume": rng.integers(0, 1000, 25),
        }
    )
    if blank_close:
        frame.loc[frame.index[4], "Close"] = np.nan
    if repeat:
        frame = pd.concat([frame, frame.iloc[:2]], ignore_index=True)
    if shuffle:
        frame = frame.sample(frac=1, random_state=0).reset_index(drop=True)
    return frame


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    text = frame.astype(object).where(frame.notna(), None)
    text["Date"] = frame["Date"].dt.strftime("%Y-%m-%d")
    return text.map(lambda v: None if v is None else str(v))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("repeat", [False, True])
@pytest.mark.parametrize("blank_close", [False, True])
def test_typed_bars_normalize_as_their_text_does(shuffle, repeat, blank_close):
    typed = _bars(shuffle, repeat, blank_close)
    fast, slow = normalize_bars_checked(typed), normalize_bars_checked(_as_text(typed))
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    assert [dataclasses.astuple(i) for i in fast.issues] == [dataclasses.astuple(i) for i in slow.issues]
    assert fast.frame["date"].is_monotonic_increasing and fast.frame["date"].is_unique
    assert bool(fast.issues) == (repeat or blank_close)
