"""Scale-out throughput: partitions/s of the market group (prices, indicators, charts and their
checks) on the offline sample source, in five set-ups measured in the same run:

  a. today's default: one in-process run per ticker over its month range, SQLite instance
     (what `stocker materialize` does without `stocker deploy init`) — the reference;
  b. Celery, 1 worker (one process): the same runs, each step sent to the worker, Postgres
     instance, Redis broker;
  c. Celery, 2 workers (one process each): the same, one ticker after the other as the CLI does
     (parallel only where a run has independent steps: indicators ∥ charts);
  d. Celery, 2 workers, one process per ticker running its run at once (as if launched from
     two machines; process start-up of ~3 s included);
  e. Celery, 1 worker with the ``solo`` pool: steps run in the worker process itself, which is
     not daemonic, so the charts step keeps its own process pool.

Postgres, Redis and the workers are started as in tests/scale (tests/scale/local_services.py)
and stopped at the end. Each set-up gets a fresh warehouse and instance and one untimed warm-up
month of another ticker (imports, worker start). Prints partitions/s, seconds/partition and the
ratio to (a).

Section 2 (bench/scale_writers.py): concurrent-writer throughput of the Parquet warehouse vs the
single DuckDB file, 1 and 2 writer processes. Then the projected wall time of a 500-ticker ×
15-year corpus on N workers, on paper, from the measured per-partition costs.

Run: python bench/bench_scale.py [--tickers AAPL,MSFT --from 2019-01 --to 2019-06 --writer-partitions 200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from scale_writers import writers_section

from stocker_core.composition import register_all

WARMUP_TICKER, WARMUP_MONTH = "KO", date(2018, 1, 1)


@dataclass
class Row:
    label: str
    partitions: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.partitions / self.seconds


def _months(first: str, last: str) -> list[date]:
    import pandas as pd

    return [p.to_timestamp().date() for p in pd.period_range(first, last, freq="M")]


def _use_home(root: Path, name: str, **extra: str) -> None:
    """Point STOCKER_HOME/DAGSTER_HOME (and the executor settings) at a fresh folder."""
    for key in [k for k in os.environ if k.startswith("STOCKER_") or k == "DAGSTER_HOME"]:
        del os.environ[key]
    os.environ.update(STOCKER_HOME=str(root / name / "home"), DAGSTER_HOME=str(root / name / "dagster"))
    os.environ.update(extra)


def _run_one(ticker: str, months: list[date], instance=None) -> None:
    """The market group of ``ticker`` × ``months`` as `stocker materialize` runs it."""
    from stocker_assets.definitions.build import build_definitions
    from stocker_assets.definitions.resources import StockerResource
    from stocker_assets.engine.instance import dagster_instance
    from stocker_assets.engine.runner import run_box, select_assets
    from stocker_core.config import get_settings

    own = instance is None
    instance = instance or dagster_instance(get_settings(fresh=True))
    defs = build_definitions({"stocker": StockerResource()})
    assets, _, _ = select_assets(defs, ["market"])
    outcome = run_box(instance, defs, (ticker,), months, assets)
    if own:
        instance.dispose()
    assert outcome.success, (ticker, outcome.errors)


def _materialize(tickers: list[str], months: list[date], concurrent: bool = False) -> float:
    """Seconds for the market group of ``tickers`` × ``months`` in the current set-up: one
    ticker after the other, or (``concurrent``) one process per ticker running its run at
    once, as if each were launched from its own machine (process start-up included). Two
    Celery runs from threads, or forks, of one process that already ran one hung here: use
    processes."""
    from stocker_assets.engine.instance import dagster_instance, register_tickers
    from stocker_core.config import get_settings

    instance = dagster_instance(get_settings(fresh=True))
    register_tickers(instance, [*tickers, WARMUP_TICKER])
    _run_one(WARMUP_TICKER, [WARMUP_MONTH], instance)
    started = time.perf_counter()
    if concurrent:
        first, last = f"{months[0]:%Y-%m}", f"{months[-1]:%Y-%m}"
        command = [sys.executable, __file__, "--run-one", "--from", first, "--to", last, "--tickers"]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
        procs = [subprocess.Popen([*command, t], **quiet) for t in tickers]
        for proc in procs:
            _, err = proc.communicate(timeout=900)
            assert proc.returncode == 0, err[-2000:]
    else:
        for ticker in tickers:
            _run_one(ticker, months, instance)
    seconds = time.perf_counter() - started
    instance.dispose()
    return seconds


def dagster_executors(args: argparse.Namespace, root: Path) -> list[Row]:
    """Section 1: in-process SQLite vs Celery with 1 and 2 workers on Postgres + Redis."""
    from stocker_assets.engine.deploy import DeployConfig, write_deploy_files

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "scale"))
    from local_services import LocalServices

    tickers, months = args.tickers.split(","), _months(args.start, args.end)
    partitions = len(tickers) * len(months)
    grid = f"{len(tickers)} tickers × {len(months)} months = {partitions} partitions"
    print(f"market group (sample source): {grid}")
    rows = []
    _use_home(root, "inprocess")
    rows.append(Row("a. in-process, SQLite (today's default)", partitions, _materialize(tickers, months)))
    with LocalServices() as services:
        postgres, redis = services.start_postgres(), services.start_redis()
        setups = [("b. Celery, 1 worker", 1, False, "prefork"), ("c. Celery, 2 workers", 2, False, "prefork")]
        setups.append(("d. Celery, 2 workers, 1 run per ticker at once", 2, True, "prefork"))
        setups.append(("e. Celery, 1 solo-pool worker", 1, False, "solo"))
        for number, (label, workers, concurrent, pool) in enumerate(setups):
            database = _fresh_database(postgres, f"bench{number}")
            broker = f"{redis}/0"  # celery_definitions reads it once per process: one for all
            _use_home(root, f"celery{number}", STOCKER_EXECUTOR="celery", STOCKER_CELERY_BROKER=broker)
            home = Path(os.environ["DAGSTER_HOME"])
            write_deploy_files(home, DeployConfig(database, broker))
            env = dict(os.environ)
            started = [
                services.start_worker(home / "celery.yaml", env, name=f"b{number}w{i}", pool=pool)
                for i in range(workers)
            ]
            try:
                rows.append(Row(label, partitions, _materialize(tickers, months, concurrent)))
            finally:
                for worker in started:
                    services.stop(worker)
    _print_table("Dagster executors (market group)", rows)
    return rows


def _fresh_database(url: str, name: str) -> str:
    import psycopg2

    con = psycopg2.connect(url)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    con.close()
    return url.rsplit("/", 1)[0] + "/" + name


def _print_table(title: str, rows: list[Row]) -> None:
    reference = rows[0].rate
    print(f"\n{title}")
    print(f"{'set-up':46} {'partitions':>10} {'seconds':>8} {'part/s':>8} {'s/part':>7} {'vs a':>6}")
    for row in rows:
        print(
            f"{row.label:46} {row.partitions:10d} {row.seconds:8.1f} {row.rate:8.2f} "
            f"{row.seconds / row.partitions:7.2f} {row.rate / reference:5.2f}x"
        )


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickers", default="AAPL,MSFT", help="comma-separated sample tickers")
    parser.add_argument("--from", dest="start", default="2019-01", help="first month, YYYY-MM")
    parser.add_argument("--to", dest="end", default="2019-06", help="last month, YYYY-MM")
    parser.add_argument("--writer-partitions", type=int, default=200, help="partitions per writer process")
    parser.add_argument("--run-one", action="store_true", help=argparse.SUPPRESS)  # set-up d's processes
    args = parser.parse_args()
    if args.run_one:
        _run_one(args.tickers, _months(args.start, args.end))
        return
    root = Path(tempfile.mkdtemp(prefix="stocker-bench-scale-"))
    os.environ.setdefault("PYTHONWARNINGS", "ignore")

    # Sections, in order; each prints its own table.
    executors = dagster_executors(args, root)
    writers = writers_section(args.writer_partitions)
    projection(executors, writers)


def projection(executors: list[Row], writers: list[dict[str, float]]) -> None:
    """On paper: a 500-ticker × 15-year corpus (90,000 ticker-months) on N workers, from the
    measured seconds per partition of one Celery worker, assuming the workers are separate
    machines (no shared cores) and the shared stores keep up: the Parquet partitions take
    ``parquet part/s`` writes per writer and grow with writers; the DuckDB catalog takes one
    lineage write per asset per run, not per partition."""
    partitions = 500 * 15 * 12
    one_worker = next(r for r in executors if "1 worker" in r.label)
    today = executors[0]
    fastest = max((w for w in writers if w["mode"] == "parquet"), key=lambda w: w["partitions_per_s"])
    writes, writer_count = fastest["partitions_per_s"], fastest["processes"]
    print(f"\nProjection: 500 tickers × 15 years = {partitions:,} ticker-month partitions, market group")
    today_hours = partitions * today.seconds / today.partitions / 3600
    print(f"  today (one process, in-process runs): {today_hours:7.1f} h")
    for n in (1, 4, 16, 64):
        hours = partitions * one_worker.seconds / one_worker.partitions / n / 3600
        print(f"  Celery, {n:3d} worker machine(s):        {hours:7.1f} h")
    minutes = partitions / writes / 60
    rate = f"{writer_count} writer(s) at {writes:.0f} partitions/s"
    print(f"  (warehouse writes alone: {minutes:.1f} min for {rate})")


if __name__ == "__main__":
    main()
