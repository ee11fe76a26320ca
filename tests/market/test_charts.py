"""Chart images: size, determinism, no look-ahead, close-only, short history, files."""

from __future__ import annotations

import hashlib
import io
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from stocker_core.config import REFERENCE_TASKS_DIR
from stocker_core.errors import StockerError
from stocker_core.market.chart_render import reference_png
from stocker_core.market.charts import (
    CHART_COLUMNS,
    ChartDataError,
    chart_window,
    render_chart,
    render_charts,
    render_month,
    verify_chart,
)
from stocker_core.market.files_source import FilesSource

FIXTURES = REFERENCE_TASKS_DIR
MAX_MEAN_ABS_DIFF = 1.0  # per channel, 0-255 scale


@pytest.fixture(scope="module")
def source() -> FilesSource:
    return FilesSource(FIXTURES)


def _bars(source: FilesSource, ticker: str) -> pd.DataFrame:
    return source.fetch(ticker, date(2000, 1, 1), date(2030, 1, 1))


@pytest.fixture(scope="module")
def aapl(source: FilesSource) -> pd.DataFrame:
    return _bars(source, "AAPL")


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def _sha(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


def test_chart_is_a_deterministic_768_png(aapl: pd.DataFrame) -> None:
    png = render_chart(aapl, "AAPL", "2023-08-15")
    image = Image.open(io.BytesIO(png))
    assert (image.format, image.size) == ("PNG", (768, 768))
    assert not set(image.info) & {"Software", "Creation Time", "date:create", "Timestamp"}
    render_chart(aapl, "AAPL", "2023-07-03")  # the reused figure held another day meanwhile
    assert _sha(render_chart(aapl, "AAPL", "2023-08-15")) == _sha(png)


def test_window_has_60_bars_and_full_history_smas(aapl: pd.DataFrame) -> None:
    window = chart_window(aapl, "AAPL", "2023-08-15")
    assert len(window.bars) == 60
    assert window.bars["date"].iloc[-1] == pd.Timestamp("2023-08-15")
    assert not np.isnan(window.sma50).any()  # earlier history used for the SMA
    expected = aapl.loc[aapl["date"] <= "2023-08-15", "close"].tail(50).mean()
    assert window.sma50[-1] == pytest.approx(expected)


def test_future_bars_never_change_the_image(aapl: pd.DataFrame) -> None:
    day = pd.Timestamp("2023-08-15")
    past = aapl[aapl["date"] <= day]
    future = aapl.copy()
    after = future["date"] > day
    future.loc[after, ["open", "high", "low", "close", "adj_close"]] = 1e6
    future.loc[after, "volume"] = 1e12
    assert _sha(render_chart(future, "AAPL", day)) == _sha(render_chart(past, "AAPL", day))


def test_close_only_is_a_labelled_line_chart(source: FilesSource) -> None:
    bars = _bars(source, "GOOGL")
    window = chart_window(bars, "GOOGL", "2023-08-15")
    assert window.kind == "line"
    assert "close only" in window.title
    png = render_chart(bars, "GOOGL", "2023-08-15")
    assert Image.open(io.BytesIO(png)).size == (768, 768)


def test_short_history_renders_what_exists_and_says_so(aapl: pd.DataFrame) -> None:
    window = chart_window(aapl, "AAPL", "2023-02-01")
    assert len(window.bars) == 13
    assert "only 13 of 60 days" in window.title
    assert Image.open(io.BytesIO(render_chart(aapl, "AAPL", "2023-02-01"))).size == (768, 768)


@pytest.mark.parametrize(
    ("ticker", "day", "message"),
    [
        ("AAPL", "2024-06-03", "has bars up to 2023-09-29; pick a date on or before it"),
        ("AAPL", "2022-01-03", "pick a date on or after it"),
        ("AAPL", "2023-08-12", "not a trading session"),
        ("../etc", "2023-08-15", "invalid ticker"),
    ],
)
def test_bad_input_raises_clear_errors(aapl: pd.DataFrame, ticker: str, day: str, message: str) -> None:
    with pytest.raises(StockerError, match=message):
        render_chart(aapl, ticker, day)


def test_fast_rendering_looks_like_mplfinance(aapl: pd.DataFrame, tmp_path: Path) -> None:
    for ticker_day in ("2023-08-15", "2023-02-01"):
        window = chart_window(aapl, "AAPL", ticker_day)
        ours, reference = _pixels(render_chart(aapl, "AAPL", ticker_day)), _pixels(reference_png(window))
        assert ours.shape == reference.shape == (768, 768, 3)
        diff = np.abs(ours - reference)
        assert diff.mean() < MAX_MEAN_ABS_DIFF, diff.mean()
        assert (diff.max(axis=-1) > 64).mean() < 0.01  # few strongly differing pixels


def test_render_month_writes_files_and_rows(aapl: pd.DataFrame, tmp_path: Path) -> None:
    bars = aapl[aapl["date"] < "2023-08-08"]  # the month's first 5 sessions: a fast test
    folder = tmp_path / "charts" / "AAPL"
    folder.mkdir(parents=True)
    (folder / "2023-08-15.png").write_bytes(b"stale")  # not in the new set: must go
    (folder / "2023-08-07.png").write_bytes(b"old bytes")  # must be replaced
    (folder / "2023-09-01.png").write_bytes(b"other month")  # must stay

    rows = render_month(bars, "AAPL", date(2023, 8, 1), tmp_path / "charts")
    assert list(rows.columns) == CHART_COLUMNS
    sessions = [date(2023, 8, d) for d in (1, 2, 3, 4, 7)]
    assert list(rows["date"]) == sessions
    assert sorted(p.name for p in folder.glob("2023-08-*")) == [f"{d:%Y-%m-%d}.png" for d in sessions]
    assert (folder / "2023-09-01.png").read_bytes() == b"other month"
    assert not list(folder.glob(".*"))  # no temporary files left
    for row in rows.itertuples():
        assert verify_chart(row.path) is None
        assert hashlib.sha256(Path(row.path).read_bytes()).hexdigest() == row.sha256
        assert (row.width, row.height) == (768, 768)
        assert row.window_end == row.date and row.window_start < row.date
    assert rows["sha256"].iloc[-1] == _sha(render_chart(aapl, "AAPL", "2023-08-07"))

    again = render_month(bars, "AAPL", "2023-08-01", tmp_path / "charts")
    pd.testing.assert_frame_equal(rows, again)  # idempotent: same files, same hashes


def test_process_pool_gives_the_same_bytes(aapl: pd.DataFrame) -> None:
    days = [date(2023, 8, d) for d in (1, 2, 3, 4)]
    pooled = render_charts(aapl, "AAPL", days, workers=2)
    assert [c.day for c in pooled] == days
    assert [c.png for c in pooled] == [render_chart(aapl, "AAPL", d) for d in days]


def _render_in_daemon(aapl: pd.DataFrame, days: list[date], out) -> None:
    out.put([c.png for c in render_charts(aapl, "AAPL", days, workers=2)])


def test_a_daemonic_process_draws_in_place(aapl: pd.DataFrame) -> None:
    """A Celery prefork child is daemonic and may not start a pool: it draws the charts itself."""
    import multiprocessing

    days = [date(2023, 8, d) for d in (1, 2, 3)]
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    worker = context.Process(target=_render_in_daemon, args=(aapl, days, out), daemon=True)
    worker.start()
    pngs = out.get(timeout=120)
    worker.join(timeout=30)
    assert worker.exitcode == 0
    assert pngs == [render_chart(aapl, "AAPL", d) for d in days]


def test_render_month_without_bars_is_an_error(aapl: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(ChartDataError, match="no bars in 2024-03"):
        render_month(aapl, "AAPL", date(2024, 3, 1), tmp_path)


def test_verify_chart_reports_problems(tmp_path: Path) -> None:
    assert "missing" in verify_chart(tmp_path / "nope.png")
    (tmp_path / "bad.png").write_bytes(b"not a png")
    assert "not a readable PNG" in verify_chart(tmp_path / "bad.png")
    Image.new("RGB", (100, 50)).save(tmp_path / "small.png")
    assert "expected 768" in verify_chart(tmp_path / "small.png")


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("STOCKER_SOURCE", "files")
    monkeypatch.setenv("STOCKER_FILES_DIR", str(FIXTURES))
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    return tmp_path


def test_cli_renders_one_chart(cli_env: Path) -> None:
    from stocker_core.cli import app

    out = cli_env / "out.png"
    result = CliRunner().invoke(app, ["chart", "AAPL", "2023-08-15", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert verify_chart(out) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["NOPE", "2023-08-15"], "no symbol"),
        (["AAPL", "2031-01-02"], "has bars up to"),
        (["AAPL", "2023-08-12"], "not a trading session"),
        (["AAPL", "15-08-2023"], "YYYY-MM-DD"),
    ],
)
def test_cli_bad_input_exits_cleanly(cli_env: Path, args: list[str], message: str) -> None:
    from stocker_core.cli import app

    result = CliRunner().invoke(app, ["chart", *args, "-o", str(cli_env / "x.png")])
    assert result.exit_code in (1, 2)  # 1: data problem, 2: usage error
    assert message in result.output
    assert not (cli_env / "x.png").exists()


def test_cli_prefers_the_warehouse(cli_env: Path, aapl: pd.DataFrame, source: FilesSource) -> None:
    from stocker_core.cli import app
    from stocker_core.config import Settings
    from stocker_core.warehouse.db import Warehouse

    scaled = aapl.copy()
    scaled[["open", "high", "low", "close", "adj_close"]] *= 2  # differs from the files source
    months = sorted({d.date().replace(day=1) for d in scaled["date"]})
    warehouse = Warehouse(Settings().warehouse_path)
    # stored as if ingested from the configured source, so the warehouse covers the range
    warehouse.upsert_symbol("files", source.symbol_info("AAPL"))
    warehouse.replace_months("market.prices", "AAPL", months, scaled.assign(source="files"))

    out = cli_env / "wh.png"
    result = CliRunner().invoke(app, ["chart", "AAPL", "2023-08-15", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == render_chart(scaled, "AAPL", "2023-08-15")
