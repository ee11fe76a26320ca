from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stocker_core.config import Settings
from stocker_core.errors import DataSourceError, InvalidNameError, UnknownTickerError
from stocker_core.market.files_source import FilesSource
from stocker_core.market.frames import FRAME_COLUMNS, normalize_bars
from stocker_core.market.sample_source import SampleSource
from stocker_core.market.source_builder import get_source


def _assert_normalized(frame: pd.DataFrame) -> None:
    assert list(frame.columns) == FRAME_COLUMNS
    assert frame["date"].dtype == "datetime64[ns]"
    assert frame["date"].is_monotonic_increasing and frame["date"].is_unique
    assert all(frame[c].dtype == "float64" for c in FRAME_COLUMNS[1:])


def test_files_source_reads_seed_fixture(seed_dir):
    source = FilesSource(seed_dir)
    aug = source.fetch("AAPL", date(2023, 8, 1), date(2023, 9, 1))
    _assert_normalized(aug)
    assert len(aug) == 23
    first = aug.iloc[0]
    assert first["date"] == pd.Timestamp("2023-08-01")
    assert first["close"] == pytest.approx(195.610001)
    assert first["adj_close"] == first["close"]  # fixture has no adjusted column
    gold = source.fetch("GC=F", date(2023, 8, 1), date(2023, 9, 1))
    assert len(gold) > 0 and gold[["open", "high", "low", "volume"]].isna().all().all()
    assert source.symbol_info("GC=F").close_only
    assert not source.symbol_info("AAPL").close_only


def test_files_source_unknown_and_hostile_tickers(seed_dir):
    source = FilesSource(seed_dir)
    with pytest.raises(UnknownTickerError, match="no symbol 'ZZZZ'"):
        source.fetch("ZZZZ", date(2023, 8, 1), date(2023, 9, 1))
    with pytest.raises(InvalidNameError):
        source.fetch("../etc", date(2023, 8, 1), date(2023, 9, 1))


def test_files_source_month_before_listing_is_empty(seed_dir):
    frame = FilesSource(seed_dir).fetch("AAPL", date(2020, 1, 1), date(2020, 2, 1))
    assert frame.empty and list(frame.columns) == FRAME_COLUMNS


def test_files_source_per_symbol_parquet_and_malformed(tmp_path: Path):
    bars = pd.DataFrame(
        {
            "Date": ["2024-01-03", "2024-01-02", "2024-01-02"],
            "Open": [2, 1, 1],
            "High": [3, 2, 2],
            "Low": [1, 0.5, 0.5],
            "Close": [2.5, 1.5, 1.5],
            "Volume": [10, 20, 20],
        }
    )
    bars.to_parquet(tmp_path / "XYZ.parquet")
    frame = FilesSource(tmp_path).fetch("XYZ", date(2024, 1, 1), date(2024, 2, 1))
    _assert_normalized(frame)
    assert frame["close"].tolist() == [1.5, 2.5]
    (tmp_path / "BAD.csv").write_bytes(b"\x00\x01garbage")
    (tmp_path / "XYZ.parquet").unlink()
    with pytest.raises(DataSourceError):
        FilesSource(tmp_path)


def test_files_source_needs_a_folder(tmp_path):
    with pytest.raises(DataSourceError, match="not a folder"):
        FilesSource(tmp_path / "missing")
    with pytest.raises(InvalidNameError, match="STOCKER_FILES_DIR"):
        get_source(Settings(source="files", files_dir=None))


def test_sample_source_ships_googl_and_close_only_context():
    source = SampleSource()
    info = source.symbol_info("GOOGL")
    assert (info.first_date, info.last_date) == (date(2009, 5, 22), date(2018, 8, 29))
    assert not info.close_only
    march = source.fetch("GOOGL", date(2012, 3, 1), date(2012, 4, 1))
    _assert_normalized(march)
    assert len(march) == 22
    spx = source.symbol_info("^GSPC")
    assert spx.close_only and spx.first_date == date(1990, 1, 2)
    assert source.fetch("AAPL", date(2020, 1, 1), date(2020, 2, 1))[["open", "high"]].isna().all().all()


def test_normalize_handles_tz_aware_index_and_aliases():
    index = pd.DatetimeIndex(["2023-08-02 00:00", "2023-08-01 00:00"], tz="America/New_York", name="Date")
    raw = pd.DataFrame(
        {
            "Open": [1, 2],
            "High": [2, 3],
            "Low": [0.5, 1],
            "Close": [1.5, 2.5],
            "Adj Close": [1.4, 2.4],
            "Volume": [100, 200],
        },
        index=index,
    )
    frame = normalize_bars(raw)
    _assert_normalized(frame)
    assert frame["date"].tolist() == [pd.Timestamp("2023-08-01"), pd.Timestamp("2023-08-02")]
    assert frame["adj_close"].tolist() == [2.4, 1.4]
    assert np.isnan(normalize_bars(pd.DataFrame({"date": ["2023-01-02"], "close": [1.0]}))["open"]).all()
    with pytest.raises(DataSourceError, match="date and a close"):
        normalize_bars(pd.DataFrame({"x": [1]}))
