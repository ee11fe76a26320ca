"""Candlestick chart images: one 768×768 PNG per (ticker, trading day).

Each image shows the 60 trading days up to and including its day (never a later
bar): candles (or a line for close-only symbols), a volume panel, SMA20/50
computed with the earlier history, and a title with ticker and date.

``render_chart`` draws one; ``render_month`` writes a month of them under
``<out_dir>/<TICKER>/<YYYY-MM-DD>.png`` and returns the rows of ``market.charts`` (``path``
the file's path: the warehouse stores it relative to ``STOCKER_HOME`` and its reads hand it
back in the home in use, see ``warehouse.home_paths``);
``verify_chart`` is the asset check's test of one file. Rendering reuses one
figure per layout (see ``chart_template``) and, for many charts, a process pool.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import date
from multiprocessing import current_process, get_context
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from stocker_core.errors import StockerError
from stocker_core.market.calendar import month_end
from stocker_core.market.chart_render import (
    CHART_PX,
    WINDOW_BARS,
    ChartWindow,
)
from stocker_core.market.chart_template import TemplateCache
from stocker_core.market.frames import is_close_only
from stocker_core.market.indicators import trailing_mean
from stocker_core.market.validation import validate_ticker

CHART_COLUMNS = [
    "ticker",
    "date",
    "path",
    "sha256",
    "width",
    "height",
    "window_start",
    "window_end",
    "input_hash",
]
SMA_LOOKBACK = 49  # earlier bars SMA50 needs before the window's first bar
POOL_MIN_CHARTS = 200  # below this, starting worker processes costs more than it saves

_templates = TemplateCache()
_lock = threading.Lock()


class ChartDataError(StockerError, LookupError):
    """No bar to chart on the requested day (outside the data, or not a session)."""


@dataclass(frozen=True)
class RenderedChart:
    """One chart's PNG and the dates its window covers."""

    day: date
    png: bytes
    window_start: date
    window_end: date
    input_hash: str = ""
    """Digest of everything drawn (bars, SMAs, title, renderer version)."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.png).hexdigest()


RENDER_VERSION = "3"  # bump when the look changes: every chart is then redrawn (2: exact SMAs;
# 3: narrow margins, legend, date ticks ending on the decision day with the year)


def window_digest(window: ChartWindow) -> str:
    """What a chart depends on, hashed: equal digests draw identical PNGs."""
    digest = hashlib.sha256(f"{RENDER_VERSION}|{window.kind}|{window.title}".encode())
    values = window.bars[["open", "high", "low", "close", "volume"]].to_numpy(dtype="float64")
    smas = np.concatenate([window.sma20, window.sma50])
    for array in (window.bars["date"].to_numpy(dtype="datetime64[ns]"), values, smas):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:32]


def _check_day(bars: pd.DataFrame, ticker: str, day: pd.Timestamp) -> None:
    dates = bars["date"]
    if len(bars) == 0:
        raise ChartDataError(f"no bars for {ticker}: ingest its prices first")
    first, last = dates.iloc[0], dates.iloc[-1]
    if day > last:
        raise ChartDataError(
            f"{ticker} has bars up to {last:%Y-%m-%d}; pick a date on or before it "
            f"({day:%Y-%m-%d} is later), or ingest more prices"
        )
    if day < first:
        raise ChartDataError(
            f"{ticker} has bars from {first:%Y-%m-%d}; pick a date on or after it ({day:%Y-%m-%d} is earlier)"
        )
    if not (dates == day).any():
        earlier = dates[dates < day].iloc[-1]
        raise ChartDataError(
            f"{ticker} has no bar on {day:%Y-%m-%d} (not a trading session in the data); "
            f"the session before it is {earlier:%Y-%m-%d}"
        )


def _title(ticker: str, day: pd.Timestamp, n: int, close_only: bool) -> str:
    notes = []
    if close_only:
        notes.append("close only: line chart")
    if n < WINDOW_BARS:
        notes.append(f"only {n} of {WINDOW_BARS} days of history")
    title = f"{ticker}  {day:%Y-%m-%d}"
    return title + ("\n" + "; ".join(notes) if notes else "")


def _windows(bars: pd.DataFrame, ticker: str, days: list[pd.Timestamp]) -> list[ChartWindow]:
    """The chart windows of ``days``; each SMA value from the 20/50 closes up to its bar."""
    bars = bars.sort_values("date").reset_index(drop=True)
    for day in days:
        _check_day(bars, ticker, day)
    last_day = max(days)
    bars = bars[bars["date"] <= last_day].reset_index(drop=True)
    first_needed = int(np.searchsorted(bars["date"].to_numpy(), np.datetime64(min(days))))
    start = max(0, first_needed - (WINDOW_BARS - 1) - SMA_LOOKBACK)
    bars = bars.iloc[start:].reset_index(drop=True)
    # each SMA value from its own 20/50 closes only: identical whatever batch of days
    # (and so whatever ``start``) a chart is drawn in
    closes = bars["close"].to_numpy(dtype=np.float64)
    sma20, sma50 = trailing_mean(closes, 20), trailing_mean(closes, 50)
    positions = np.searchsorted(bars["date"].to_numpy(), np.array(days, dtype="datetime64[ns]"))
    windows = []
    for day, pos in zip(days, positions, strict=True):
        lo = max(0, pos + 1 - WINDOW_BARS)
        window = bars.iloc[lo : pos + 1].reset_index(drop=True)
        close_only = bool(is_close_only(window))
        windows.append(
            ChartWindow(
                ticker=ticker,
                day=day,
                bars=window,
                sma20=sma20[lo : pos + 1],
                sma50=sma50[lo : pos + 1],
                title=_title(ticker, day, len(window), close_only),
                kind="line" if close_only else "candle",
            )
        )
    return windows


def chart_windows(
    bars: pd.DataFrame, ticker: str, days: list[date] | list[pd.Timestamp]
) -> list[ChartWindow]:
    """The data the charts of ``days`` show, computed as one batch (as ``render_months`` does)."""
    validate_ticker(ticker)
    return _windows(bars, ticker, [pd.Timestamp(d).normalize() for d in days])


def chart_window(bars: pd.DataFrame, ticker: str, day: date | str | pd.Timestamp) -> ChartWindow:
    """The data one chart of ``ticker`` on ``day`` shows (bars after ``day`` are ignored)."""
    validate_ticker(ticker)
    return _windows(bars, ticker, [pd.Timestamp(day).normalize()])[0]


def draw_window(window: ChartWindow) -> bytes:
    """PNG bytes of one window, drawn with this process's reusable figures."""
    with _lock:
        return _templates.get(window.layout).render_png(window)


def render_chart(bars_upto_day: pd.DataFrame, ticker: str, day: date | str | pd.Timestamp) -> bytes:
    """A 768×768 PNG of the 60 trading days up to and including ``day``.

    ``bars_upto_day`` is a normalized bar frame (see ``frames.normalize_bars``); rows
    after ``day`` are ignored. Raises ChartDataError when ``day`` has no bar.
    """
    return draw_window(chart_window(bars_upto_day, ticker, day))


def _render_chunk(bars: pd.DataFrame, ticker: str, days: list[pd.Timestamp]) -> list[RenderedChart]:
    out = []
    for window in _windows(bars, ticker, days):
        out.append(
            RenderedChart(
                day=window.day.date(),
                png=draw_window(window),
                window_start=window.bars["date"].iloc[0].date(),
                window_end=window.bars["date"].iloc[-1].date(),
                input_hash=window_digest(window),
            )
        )
    return out


def _pool_size(n_charts: int, workers: int | None) -> int:
    if current_process().daemon:
        # a daemonic process (a Celery prefork worker's child, a multiprocessing pool's worker)
        # may not start children: draw here; the workers around it are the parallelism
        return 1
    if workers is None:
        workers = (os.cpu_count() or 1) if n_charts >= POOL_MIN_CHARTS else 1
    return max(1, min(workers, n_charts))


PARENT_POLL_S = 0.5
"""How often a chart worker checks that the process that started it is still alive."""


def _watch_parent(parent_pid: int) -> None:
    """Exit this worker as soon as ``parent_pid`` is gone (kill -9 of ``stocker materialize``
    included), instead of living on under PID 1. The parent's exit reparents the worker, so
    its parent id changes; polled from a daemon thread (PR_SET_PDEATHSIG would follow the
    *thread* that started the worker, and a long-lived pool outlives the step's thread)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    if os.getppid() != parent_pid:  # the parent died before this worker got going
        os._exit(0)
    threading.Thread(target=watch, name="chart-worker-parent-watch", daemon=True).start()


def chart_pool(workers: int | None = None) -> ProcessPoolExecutor:
    """A process pool for ``render_charts`` (spawned: safe beside threads and DuckDB); its
    workers exit within ``PARENT_POLL_S`` of their parent's death."""
    return ProcessPoolExecutor(
        max_workers=workers or os.cpu_count() or 1,
        mp_context=get_context("spawn"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )


def render_charts(
    bars: pd.DataFrame,
    ticker: str,
    days: list[date] | list[pd.Timestamp],
    workers: int | None = None,
    pool: ProcessPoolExecutor | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[RenderedChart]:
    """Charts of ``ticker`` for each of ``days`` (in order).

    ``workers=None`` uses one process for small batches and a pool sized to the
    cores for large ones; pass ``pool`` (see ``chart_pool``) to reuse a running one
    (the days are then split into ``workers`` or as many chunks as cores).
    ``progress(done)`` is called with the number of charts drawn so far as chunks finish
    (with it the days are cut into smaller chunks, so it moves often; output is the same).
    """
    validate_ticker(ticker)
    stamps = [pd.Timestamp(d).normalize() for d in days]
    if not stamps:
        return []
    if pool is not None and not current_process().daemon:
        n_workers = max(1, min(workers or os.cpu_count() or 1, len(stamps)))
    else:
        n_workers = _pool_size(len(stamps), workers)
    n_chunks = n_workers if progress is None else min(len(stamps), max(n_workers * 4, -(-len(stamps) // 20)))
    chunks = [list(c) for c in np.array_split(np.array(stamps, dtype=object), n_chunks) if len(c)]
    if n_workers <= 1:
        out: list[RenderedChart] = []
        for chunk in chunks:
            out += _render_chunk(bars, ticker, chunk)
            if progress is not None:
                progress(len(out))
        return out
    ordered = bars.sort_values("date").reset_index(drop=True)
    for day in stamps:  # fail here, not inside a worker
        _check_day(ordered, ticker, day)
    own = pool or chart_pool(n_workers)
    try:
        futures = [own.submit(_render_chunk, bars, ticker, chunk) for chunk in chunks]
        if progress is not None:
            drawn = 0
            for future in as_completed(futures):
                drawn += len(future.result())
                progress(drawn)
        return [chart for future in futures for chart in future.result()]
    finally:
        if pool is None:
            own.shutdown()


def chart_path(out_dir: Path, ticker: str, day: date) -> Path:
    """``<out_dir>/<TICKER>/<YYYY-MM-DD>.png``."""
    return Path(out_dir) / validate_ticker(ticker) / f"{day:%Y-%m-%d}.png"


def _month_start(month: date | str | pd.Timestamp) -> date:
    return pd.Timestamp(month).date().replace(day=1)


def render_month(
    bars_full: pd.DataFrame,
    ticker: str,
    month: date | str | pd.Timestamp,
    out_dir: Path,
    workers: int | None = None,
) -> pd.DataFrame:
    """Write one chart per trading day of ``month`` present in ``bars_full``.

    Files go to ``<out_dir>/<TICKER>/<YYYY-MM-DD>.png`` via temporary files and
    atomic renames, after every chart of the month rendered; that month's other
    files of the ticker are deleted. Returns the ``market.charts`` rows
    (``CHART_COLUMNS``). Raises ChartDataError when the month has no bars.
    """
    validate_ticker(ticker)
    start = _month_start(month)
    rows = render_months(bars_full, ticker, [start], out_dir, workers)
    if rows.empty:
        raise ChartDataError(f"{ticker} has no bars in {start:%Y-%m}: ingest its prices for that month first")
    return rows


def _reusable(
    windows: list[ChartWindow], out_dir: Path, previous: Mapping[date, tuple[str, str]]
) -> dict[date, RenderedChart]:
    """Charts whose inputs are unchanged and whose file still has the recorded hash."""
    reused = {}
    for window in windows:
        day = window.day.date()
        known = previous.get(day)
        if known is None or known[0] != window_digest(window):
            continue
        path = chart_path(out_dir, window.ticker, day)
        png = path.read_bytes() if path.is_file() else b""
        if hashlib.sha256(png).hexdigest() == known[1]:
            reused[day] = RenderedChart(
                day, png, window.bars["date"].iloc[0].date(), window.bars["date"].iloc[-1].date(), known[0]
            )
    return reused


def render_months(
    bars_full: pd.DataFrame,
    ticker: str,
    months: list[date],
    out_dir: Path,
    workers: int | None = None,
    previous: Mapping[date, tuple[str, str]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """``render_month`` for many months in one pass (one worker pool for all charts).

    Months without bars are skipped (no rows, their files untouched). ``previous``
    maps a day to its recorded (input hash, sha256): charts whose inputs and file are
    unchanged are reused instead of redrawn (``rows.attrs["redrawn"]`` counts the others).
    ``progress(done, total)`` counts the charts ready (reused ones first) as drawing goes.
    """
    validate_ticker(ticker)
    dates = bars_full["date"]
    by_month: dict[date, list[pd.Timestamp]] = {}
    for month in sorted({_month_start(m) for m in months}):
        mask = (dates >= pd.Timestamp(month)) & (dates < pd.Timestamp(month_end(month)))
        if mask.any():
            by_month[month] = sorted(dates[mask])
    all_days = [d for days in by_month.values() for d in days]
    reused = (
        _reusable(_windows(bars_full, ticker, all_days), Path(out_dir), previous)
        if previous and all_days
        else {}
    )
    todo = [d for d in all_days if d.date() not in reused]
    report = None
    if progress is not None:
        progress(len(reused), len(all_days))

        def report(drawn: int) -> None:
            progress(len(reused) + drawn, len(all_days))

    fresh = iter(render_charts(bars_full, ticker, todo, workers=workers, progress=report) if todo else [])
    charts = [reused[d.date()] if d.date() in reused else next(fresh) for d in all_days]
    rows = []
    offset = 0
    for month, days in by_month.items():
        part = charts[offset : offset + len(days)]
        offset += len(days)
        rows.append(_write_month(part, ticker, month, Path(out_dir)))
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=CHART_COLUMNS)
    out.attrs["redrawn"] = len(todo)
    return out


def _write_month(charts: list[RenderedChart], ticker: str, start: date, out_dir: Path) -> pd.DataFrame:
    """Atomically write a month's rendered charts and drop that month's stale files."""
    folder = out_dir / ticker
    folder.mkdir(parents=True, exist_ok=True)
    targets = [chart_path(out_dir, ticker, chart.day) for chart in charts]
    pending: list[tuple[Path, Path]] = []
    try:
        for chart, target in zip(charts, targets, strict=True):
            if target.exists() and target.read_bytes() == chart.png:
                continue
            tmp = folder / f".{target.name}.{os.getpid()}.tmp"
            tmp.write_bytes(chart.png)
            pending.append((tmp, target))
        for tmp, target in pending:
            os.replace(tmp, target)
    finally:
        for tmp, _ in pending:
            tmp.unlink(missing_ok=True)
    keep = {t.name for t in targets}
    for stale in folder.glob(f"{start:%Y-%m}-*.png"):
        if stale.name not in keep:
            stale.unlink(missing_ok=True)
    for leftover in folder.glob(f".{start:%Y-%m}-*.png.*.tmp"):  # from a killed run
        leftover.unlink(missing_ok=True)
    return pd.DataFrame(
        {
            "ticker": ticker,
            "date": [c.day for c in charts],
            "path": [str(t) for t in targets],
            "sha256": [c.sha256 for c in charts],
            "width": CHART_PX,
            "height": CHART_PX,
            "window_start": [c.window_start for c in charts],
            "window_end": [c.window_end for c in charts],
            "input_hash": [c.input_hash for c in charts],
        },
        columns=CHART_COLUMNS,
    )


def thumbnail_png(path: Path | str, size: int = 256) -> bytes:
    """A ``size``-pixel PNG thumbnail of a chart file (for previews in the Dagster UI)."""
    import io

    with Image.open(path) as image:
        small = image.convert("RGB").resize((size, size), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    small.save(buffer, format="png", optimize=True)
    return buffer.getvalue()


def verify_chart(path: Path | str) -> str | None:
    """None when ``path`` is a readable 768×768 PNG, else what is wrong with it."""
    path = Path(path)
    if not path.is_file():
        return f"{path} is missing"
    try:
        with Image.open(path) as image:  # header, size, and every chunk's CRC (no decode)
            size, fmt = image.size, image.format
            image.verify()
    except Exception as exc:  # any decoding failure is a finding, not a crash
        return f"{path} is not a readable PNG: {exc}"
    if fmt != "PNG":
        return f"{path} is a {fmt} image, not a PNG"
    if size != (CHART_PX, CHART_PX):
        return f"{path} is {size[0]}×{size[1]}, expected {CHART_PX}×{CHART_PX}"
    return None
