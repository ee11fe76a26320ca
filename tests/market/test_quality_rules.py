"""Issue 11 item 2: every kind of bad bar is detected and named, at ingest (before dedup)."""

from datetime import date

import numpy as np
import pandas as pd
import pytest

from stocker_core.market.frames import normalize_bars, normalize_bars_checked
from stocker_core.market.quality import JUMP_RATIO, month_verdicts, stored_problems_by_month

AUG = date(2023, 8, 1)


def _bars(changes: dict | None = None) -> pd.DataFrame:
    """Five clean sessions 2023-08-01..07 (close 100, 101, 102, 103, 104)."""
    dates = ["2023-08-01", "2023-08-02", "2023-08-03", "2023-08-04", "2023-08-07"]
    close = [100.0, 101.0, 102.0, 103.0, 104.0]
    frame = pd.DataFrame(
        {
            "date": dates,
            "open": close,
            "high": [c + 1 for c in close],
            "low": [c - 1 for c in close],
            "close": close,
            "volume": 1000.0,
        }
    )
    for (column, row), value in (changes or {}).items():
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
    return frame


def _verdict(raw: pd.DataFrame) -> list[str]:
    checked = normalize_bars_checked(raw)
    return month_verdicts(checked.frame, [AUG], checked.issues).get(AUG, [])


def test_clean_bars_pass():
    assert _verdict(_bars()) == []


def test_duplicate_dates_are_detected_before_dedup():
    raw = pd.concat([_bars(), _bars().iloc[[2]].assign(volume=5.0)], ignore_index=True)
    checked = normalize_bars_checked(raw)
    assert len(checked.frame) == 5  # one row per date is kept ...
    problems = month_verdicts(checked.frame, [AUG], checked.issues)[AUG]
    assert problems == ["duplicate date 2023-08-03 (2 rows)"]  # ... but the duplicate is named


def test_nan_close_is_named_not_silently_dropped():
    assert _verdict(_bars({("close", 1): np.nan})) == ["NaN close on 2023-08-02"]


def test_text_in_a_number_column_is_named():
    assert _verdict(_bars({("high", 3): "n/a"})) == ["non-numeric high 'n/a' on 2023-08-04"]


def test_non_positive_prices_and_high_below_low():
    problems = _verdict(_bars({("low", 0): -5.0, ("high", 2): 90.0}))
    assert "non-positive low on 2023-08-01" in problems
    assert "high below low on 2023-08-03" in problems
    assert "high below open/close on 2023-08-03" in problems


def test_open_above_high_is_named():
    assert _verdict(_bars({("open", 4): 200.0})) == ["high below open/close on 2023-08-07"]


def test_session_off_the_exchange_calendar():
    # 2023-08-05 is a Saturday
    problems = _verdict(_bars({("date", 4): "2023-08-05"}))
    assert problems == ["2023-08-05 is not an XNYS session"]


def test_split_like_jump_is_named_and_threshold_documented():
    assert JUMP_RATIO == 1.8
    problems = _verdict(_bars({("close", 3): 1030.0, ("high", 3): 1031.0, ("open", 3): 1030.0}))
    # 102 -> 1030 (x10.1), then 1030 -> 104 (x0.10): both days are split-like jumps
    assert problems == [
        "split-like jump x10.10 in close on 2023-08-04 (no split in adj_close)",
        "split-like jump x0.10 in close on 2023-08-07 (no split in adj_close)",
    ]


def test_a_split_visible_in_adj_close_is_not_a_jump():
    raw = _bars()
    raw["adj_close"] = raw["close"]
    raw.loc[3:, ["open", "high", "low", "close"]] = raw.loc[3:, ["open", "high", "low", "close"]] / 2
    assert _verdict(raw) == []


def test_missing_ohlc_column_fails_every_month():
    raw = _bars().drop(columns="high")
    problems = _verdict(raw)
    assert problems == ["missing column high (open, low present)"]


def test_close_only_data_is_fine():
    raw = _bars()[["date", "close"]]
    assert _verdict(raw) == []


def test_partial_nan_in_ohlc_row_is_named():
    assert _verdict(_bars({("low", 2): np.nan})) == ["NaN low on 2023-08-03"]


def _with_july_31(close: float, adj_close: float) -> pd.DataFrame:
    """``_bars()`` normalized, after a 2023-07-31 bar closing at ``close`` (``adj_close``)."""
    august = normalize_bars(_bars())
    july = august.iloc[:1].copy()
    july[["open", "high", "low", "close"]] = [close, close + 1, close - 1, close]
    july[["date", "adj_close"]] = [pd.Timestamp("2023-07-31"), adj_close]
    return pd.concat([july, august], ignore_index=True)


def test_the_previous_month_s_close_catches_a_jump_on_the_first_day():
    jump = "split-like jump x10.00 in close on 2023-08-01 (no split in adj_close)"
    assert stored_problems_by_month(_with_july_31(10.0, 10.0)) == {AUG: [jump]}
    # a split the adjusted close shares across the month's edge is no problem
    assert stored_problems_by_month(_with_july_31(10.0, 100.0)) == {}


def test_stored_duplicate_dates_are_named_first_in_their_month():
    frame = normalize_bars(_bars())
    doubled = pd.concat([frame, frame.iloc[[2]]]).sort_values("date", ignore_index=True)
    doubled.loc[3, "high"] = 90.0  # the second 2023-08-03 row also has high below low
    found = stored_problems_by_month(doubled)
    assert list(found) == [AUG] and found[AUG][0] == "duplicate dates"
    assert "high below low on 2023-08-03" in found[AUG]


@pytest.mark.parametrize("ratio,flagged", [(1.79, False), (1.81, True), (1 / 1.79, False), (1 / 1.81, True)])
def test_jump_threshold_is_symmetric(ratio, flagged):
    raw = _bars()
    raw.loc[4, ["open", "high", "low", "close"]] = np.array([1, 1, 1, 1]) * 103.0 * ratio
    raw.loc[4, "high"] = 103.0 * ratio + 1
    raw.loc[4, "low"] = 103.0 * ratio - 1
    assert bool(_verdict(raw)) is flagged


def test_nan_volume_in_an_ohlc_row_is_named():
    assert _verdict(_bars({("volume", 2): np.nan})) == ["NaN volume on 2023-08-03"]
