"""What the settings accept is what the docs say (issue 52): a synthetic ticker count in ASCII
digits or ticker names, months ``YYYY-MM`` (or a day), days and clocks in ISO 8601, and a
blank folder variable read as unset. The refusals are in ``test_settings_errors.BAD``."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from stocker_core.config import get_settings
from stocker_core.settings.sources import synthetic_ticker_names
from stocker_core.settings.values import parse_month_setting


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("3", ["SYN1", "SYN2", "SYN3"]),
        (" 2 ", ["SYN1", "SYN2"]),
        ("003", ["SYN1", "SYN2", "SYN3"]),
        ("alfa, BETA,alfa", ["ALFA", "BETA"]),
    ],
)
def test_a_synthetic_ticker_count_or_names(value: str, names: list[str]) -> None:
    assert synthetic_ticker_names(value) == names


@pytest.mark.parametrize("value", ["٣", "３", "-1", "../x", "A;DROP", "0", "5001", "1000000", "9" * 5000, ""])
def test_other_spellings_of_synthetic_tickers_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="expected a count from 1 to 5000"):
        synthetic_ticker_names(value)


@pytest.mark.parametrize(
    ("value", "month"), [("2016-01", date(2016, 1, 1)), ("2016-02-17", date(2016, 2, 1))]
)
def test_a_month_setting_is_yyyy_mm_or_a_day(value: str, month: date) -> None:
    assert parse_month_setting(value) == month


@pytest.mark.parametrize(
    "value", ["2016-1", "2016-1-1", "２０１６-01", "٢٠١٦-٠١", "201601", "20160101", "2016-13"]
)
def test_other_month_spellings_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="expected a month, YYYY-MM"):
        parse_month_setting(value)


@pytest.mark.parametrize("name", ["STOCKER_FILES_DIR", "STOCKER_TEXT_DIR"])
def test_a_blank_folder_variable_is_unset(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``STOCKER_FILES_DIR=`` is no folder, not the working folder (which a reader would scan)."""
    monkeypatch.setenv(name, " ")
    assert getattr(get_settings(fresh=True), name.removeprefix("STOCKER_").lower()) is None


def test_a_blank_home_is_the_default_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STOCKER_HOME", "")
    assert get_settings(fresh=True).home == tmp_path / "data"


def test_iso_days_and_clocks_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOCKER_SYNTH_START", "2021-03-04")
    monkeypatch.setenv("STOCKER_CLOCK", "2016-03-01T22:00:00+00:00")
    settings = get_settings(fresh=True)
    assert settings.synth_start == date(2021, 3, 4)
    assert settings.clock.isoformat() == "2016-03-01T22:00:00+00:00"
