"""The warehouse-writers section of bench_scale: Parquet partitions vs the single DuckDB file.

Each writer is a separate process writing ``partitions`` ticker-months of bars. The Parquet
layout writes them through ``Warehouse.replace_months``; the reference is the layout before
it, one DuckDB file that admits one writer process at a time, written the way the old code
did (connect, retry while another process holds the lock, DELETE + INSERT, close).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

WRITER = textwrap.dedent(
    """
    import json, sys, time
    import duckdb, numpy as np, pandas as pd
    from stocker_core.warehouse import Warehouse
    from stocker_core.warehouse.schema import TABLES

    mode, path, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    months = [d.date() for d in pd.date_range("2000-01-01", periods=20, freq="MS")]
    jobs = [(f"W{writer}T{i // 20}", months[i % 20]) for i in range(count)]

    def bars(month):
        days = pd.bdate_range(month, pd.Timestamp(month) + pd.offsets.MonthEnd(0))
        close = 100 + np.arange(len(days), dtype=float)
        return pd.DataFrame({"date": days, "open": close, "high": close, "low": close, "close": close,
                             "adj_close": close, "volume": 1e6, "source": "bench"})

    frames = [bars(m) for _, m in jobs]
    lock_waits = errors = 0
    start = time.perf_counter()
    if mode == "parquet":
        warehouse = Warehouse(path)
        for (ticker, month), frame in zip(jobs, frames):
            warehouse.replace_months("market.prices", ticker, [month], frame)
    else:
        for (ticker, month), frame in zip(jobs, frames):
            for attempt in range(2000):
                try:
                    con = duckdb.connect(path)
                    break
                except duckdb.IOException:
                    lock_waits += 1
                    time.sleep(0.005)
            else:
                errors += 1
                continue
            try:
                con.execute("CREATE SCHEMA IF NOT EXISTS market")
                con.execute(TABLES["market.prices"])
                con.execute("BEGIN TRANSACTION")
                end = (pd.Timestamp(month) + pd.offsets.MonthBegin(1)).date()
                con.execute("DELETE FROM market.prices WHERE ticker = ? AND date >= ? AND date < ?",
                            [ticker, month, end])
                con.register("incoming", frame.assign(ticker=ticker))
                con.execute("INSERT INTO market.prices BY NAME SELECT * FROM incoming")
                con.execute("COMMIT")
            finally:
                con.close()
    print(json.dumps({"seconds": time.perf_counter() - start, "lock_waits": lock_waits, "errors": errors}))
    """
)


def run_writers(mode: str, processes: int, partitions: int) -> dict[str, float]:
    """``processes`` writers of ``partitions`` each, at once; wall time, partitions/s, lock waits."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.duckdb")
        if mode == "parquet":
            from stocker_core.warehouse import Warehouse

            Warehouse(path).ensure_schema()
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, mode, path, str(w), str(partitions)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(processes)
        ]
        reports = []
        for proc in procs:
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"{mode} writer failed: {err.strip().splitlines()[-1]}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
        wall = time.perf_counter() - started
        # the writing itself (process start and imports excluded): from the first writer's
        # start to the last one's end is bounded by the slowest writer's loop
        loop = max(r["seconds"] for r in reports)
    total = processes * partitions
    return {
        "mode": mode,
        "processes": processes,
        "partitions": total,
        "loop_s": loop,
        "wall_s": wall,
        "partitions_per_s": total / loop,
        "lock_waits": sum(r["lock_waits"] for r in reports),
        "errors": sum(r["errors"] for r in reports),
    }


def writers_section(partitions: int = 200) -> list[dict[str, float]]:
    """Print and return the writer throughputs, ratios against the single file at the same
    number of processes."""
    rows = [run_writers(mode, n, partitions) for n in (1, 2) for mode in ("duckdb-file", "parquet")]
    print(f"\n## Warehouse writers: {partitions} ticker-month partitions per process")
    header = ("layout", "procs", "partitions", "seconds", "part/s", "lock waits", "ratio")
    print("{:<12} {:>5} {:>10} {:>8} {:>8} {:>10} {:>6}".format(*header))
    reference = {r["processes"]: r["partitions_per_s"] for r in rows if r["mode"] == "duckdb-file"}
    for r in rows:
        ratio = r["partitions_per_s"] / reference[r["processes"]]
        print(
            f"{r['mode']:<12} {r['processes']:>5} {r['partitions']:>10} {r['loop_s']:>8.2f} "
            f"{r['partitions_per_s']:>8.1f} {r['lock_waits']:>10} {ratio:>5.2f}x"
        )
    one = next(r for r in rows if r["mode"] == "parquet" and r["processes"] == 1)["partitions_per_s"]
    two = next(r for r in rows if r["mode"] == "parquet" and r["processes"] == 2)["partitions_per_s"]
    print(f"parquet, 2 writers vs 1: {two / one:.2f}x (2 cores)")
    return rows


if __name__ == "__main__":
    writers_section(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
