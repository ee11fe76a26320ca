"""Chart rendering speed: straightforward mplfinance vs ours, against the PNG-encode floor.

Usage: python bench/bench_charts.py [N_DAYS]   (default 40; finishes in well under 90 s)

On the same N_DAYS windows of synthetic daily bars it prints charts/s for
- straightforward: a new mplfinance figure + savefig per chart,
- ours, one process: one reused figure per layout, artists updated, Agg + Pillow PNG
  (after drawing N_DAYS earlier days, as in a corpus build: figure and text cache warm),
- ours, process pool sized to the cores (warm the same way; the cold warm-up run,
  including process start-up, is printed too),
and the floor: encoding one 768×768 chart image to PNG alone (with our encoder
settings, and with Pillow's defaults as ``savefig`` uses them).
"""

from __future__ import annotations

import gc
import io
import os
import sys
import time

import numpy as np
import pandas as pd
from PIL import Image

from stocker_core.composition import register_all
from stocker_core.market.chart_render import encode_png, reference_png
from stocker_core.market.charts import _templates, _windows, chart_pool, draw_window, render_charts

TICKER = "SYNTH"
ROUND = 20  # days per turn


def synthetic_bars(n: int = 300, seed: int = 7) -> pd.DataFrame:
    """A reproducible random-walk OHLCV frame in the normalized layout."""
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.015, n)))
    open_ = close * np.exp(rng.normal(0, 0.006, n))
    high = np.maximum(open_, close) * (1 + rng.uniform(0, 0.01, n))
    low = np.minimum(open_, close) * (1 - rng.uniform(0, 0.01, n))
    return pd.DataFrame(
        {
            "date": pd.bdate_range("2022-01-03", periods=n),
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "adj_close": close,
            "volume": rng.integers(20_000_000, 90_000_000, n).astype("float64"),
        }
    )


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def best_of(fn, reps: int) -> float:
    return min(timed(fn)[0] for _ in range(reps))


def main(n_days: int = 40) -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    bars = synthetic_bars()
    days = list(bars["date"].iloc[-n_days:])
    warmup_days = list(bars["date"].iloc[-2 * n_days : -n_days])  # earlier, different days
    windows = _windows(bars, TICKER, days)
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{n_days} charts of {TICKER}, 768x768, {cores} cores, load average {load:.2f}")

    # ours as in a corpus build: the process has already drawn other days (figure
    # built, text cache warm); the timed days themselves are new to it
    t_build, _ = timed(lambda: _templates.get(windows[0].layout))
    render_charts(bars, TICKER, warmup_days, workers=1)

    # the three ways take turns on rounds of days, so load from other processes on
    # this machine falls on all of them alike
    t_ref = t_ours = t_pool = 0.0
    ref_pngs: list[bytes] = []
    our_pngs: list[bytes] = []
    pooled: list = []
    with chart_pool(cores) as pool:
        t_cold, _ = timed(lambda: render_charts(bars, TICKER, warmup_days, pool=pool))
        for start in range(0, n_days, ROUND):
            part = slice(start, start + ROUND)
            gc.collect()
            t, pngs = timed(lambda p=part: [reference_png(w) for w in windows[p]])
            t_ref, ref_pngs = t_ref + t, ref_pngs + pngs
            gc.collect()
            t, pngs = timed(lambda p=part: [draw_window(w) for w in windows[p]])
            t_ours, our_pngs = t_ours + t, our_pngs + pngs
            gc.collect()
            t, charts = timed(lambda p=part: render_charts(bars, TICKER, days[p], pool=pool))
            t_pool, pooled = t_pool + t, pooled + charts
    same = [c.png for c in pooled] == our_pngs

    rgba = np.asarray(Image.open(io.BytesIO(our_pngs[-1])).convert("RGBA"))

    def pillow_default() -> None:
        Image.fromarray(rgba).save(io.BytesIO(), format="png")

    floor = best_of(lambda: encode_png(rgba), 15)
    floor_default = best_of(pillow_default, 15)

    diffs = [
        np.abs(
            np.asarray(Image.open(io.BytesIO(a)).convert("RGB"), dtype=np.int16)
            - np.asarray(Image.open(io.BytesIO(b)).convert("RGB"), dtype=np.int16)
        ).mean()
        for a, b in zip(our_pngs, ref_pngs, strict=True)
    ]

    per_single, per_pool = t_ours / n_days, t_pool / n_days
    rows = [
        ("straightforward (new mplfinance figure + savefig)", n_days / t_ref, t_ref / n_days),
        ("ours, 1 process (reused figure, Agg, Pillow)", n_days / t_ours, per_single),
        (f"ours, pool of {cores} (warm)", n_days / t_pool, per_pool),
        (f"ours, pool of {cores} (cold: process start, other days)", n_days / t_cold, t_cold / n_days),
    ]
    for label, rate, per in rows:
        print(f"  {label:<52} {rate:7.2f} charts/s  {per * 1000:7.1f} ms/chart")
    print(f"  template build (once per process and layout)         {t_build * 1000:7.1f} ms")
    print(f"  ratio ours/straightforward: 1 process {t_ref / t_ours:5.1f}x, pool {t_ref / t_pool:5.1f}x")
    print(
        f"  floor: PNG encode alone, our settings (RGB, level 1) {floor * 1000:7.1f} ms; "
        f"Pillow defaults (RGBA, level 6) {floor_default * 1000:7.1f} ms"
    )
    print(
        f"  ours per chart / floor (our settings): 1 process {per_single / floor:4.1f}x, "
        f"pool {per_pool / floor:4.1f}x"
    )
    print(
        f"  ours per chart / floor (defaults):     1 process {per_single / floor_default:4.1f}x,"
        f" pool {per_pool / floor_default:4.1f}x"
    )
    print(
        f"  pool output identical to 1 process: {same}; "
        f"mean abs pixel diff vs straightforward: max {max(diffs):.4f} (0-255)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
