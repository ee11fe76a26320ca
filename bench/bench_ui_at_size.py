"""The Dagster UI with a universe's partitions (issue 49): does it still answer in <= 3 s?

Usage: python bench/bench_ui_at_size.py [--tickers 500] [--months 120]

For each size — the sample's (11 tickers × 51 months, the reference) and the universe's — a
fresh home gets the tickers registered and one materialization recorded for every ticker ×
month partition of each of the 7 partitioned assets (stored in batches, as the "no data"
markers are: the UI reads the same rows a build leaves), then ``stocker ui`` is started and the
GraphQL requests the UI makes for the asset graph, the ``prices`` asset page and its partition
status are timed (median of three, after a first request that loads the code location).
Before the UI, the automation sensor's evaluation over every asset is timed twice: its first
tick (every partition's history read) and the next one (from the first one's cursor).
Prints the seconds per size and the universe's ratio to the sample.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import httpx
from bench_universe import ASSET_PAGE, GRAPH, PARTITIONS, base_env, free_port, median_seconds, serving, stop

from stocker_core.composition import register_all

SAMPLE = (11, 51)
FIRST_MONTH = (2014, 6)


def months(count: int) -> list[str]:
    year, month = FIRST_MONTH
    found = []
    for _ in range(count):
        found.append(f"{year:04d}-{month:02d}-01")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return found


def fill(env: dict[str, str], tickers: int, month_count: int) -> float:
    """Register ``tickers`` and record every partition of every partitioned asset; seconds."""
    from stocker_assets.definitions.location import defs
    from stocker_assets.definitions.partitions import ticker_month_partitions
    from stocker_assets.engine.event_batch import report_materializations
    from stocker_assets.engine.instance import dagster_instance, register_tickers
    from stocker_core.config import get_settings

    os.environ.update(env)
    names = [f"SYN{i}" for i in range(1, tickers + 1)]
    keys = [k for a in defs.assets if a.partitions_def == ticker_month_partitions for k in a.keys]
    began = time.perf_counter()
    with dagster_instance(get_settings(fresh=True)) as instance:
        register_tickers(instance, names)
        for key in keys:
            report_materializations(
                instance,
                [
                    dg.AssetMaterialization(asset_key=key, partition=f"{t}|{m}", metadata={"rows_written": 1})
                    for t in names
                    for m in months(month_count)
                ],
            )
    return time.perf_counter() - began


def automation_ticks(env: dict[str, str]) -> dict[str, float]:
    """Seconds of the automation sensor's evaluation over every asset (what
    ``default_automation_condition_sensor`` runs each tick): the first tick, which reads every
    partition's history, and the next, which starts from the first one's cursor."""
    from stocker_assets.definitions.location import defs
    from stocker_assets.engine.instance import dagster_instance
    from stocker_core.config import get_settings

    os.environ.update(env)
    found = {}
    with dagster_instance(get_settings(fresh=True)) as instance:
        began = time.perf_counter()
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        found["automation first tick"] = time.perf_counter() - began
        began = time.perf_counter()
        dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        found["automation next tick"] = time.perf_counter() - began
    return found


def ui_latencies(env: dict[str, str], home: Path) -> dict[str, float]:
    port = free_port()
    ui = serving(env, ["ui", "--port", str(port)], f"http://127.0.0.1:{port}/server_info", home / "ui.log")
    graphql = f"http://127.0.0.1:{port}/graphql"
    found = {}
    try:
        queries = (("UI asset graph", GRAPH), ("UI asset page", ASSET_PAGE), ("UI partitions", PARTITIONS))
        for name, query in queries:

            def ask(query: str = query) -> None:
                answer = httpx.post(graphql, json={"query": query}, timeout=600).json()
                if "errors" in answer:
                    sys.exit(f"GraphQL error: {answer['errors']}")

            ask()
            found[name] = median_seconds(ask)
    finally:
        stop(ui)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickers", type=int, default=500)
    parser.add_argument("--months", type=int, default=120)
    args = parser.parse_args()
    register_all()
    columns: dict[str, dict[str, float]] = {}
    for tickers, month_count in (SAMPLE, (args.tickers, args.months)):
        label = f"{tickers} x {month_count} months"
        with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
            env = base_env(tmp, 1)
            print(f"[{label}] recording partitions ...", file=sys.stderr, flush=True)
            figures = {"record partitions": fill(env, tickers, month_count)}
            print(f"[{label}] automation ticks ...", file=sys.stderr, flush=True)
            figures.update(automation_ticks(env))
            figures.update(ui_latencies(env, Path(tmp)))
            columns[label] = figures
    sample, universe = columns.values()
    print(f"{'':22}" + "".join(f"{label:>22}" for label in columns) + "   ratio   bar")
    for name in sample:
        ratio = universe[name] / sample[name] if sample[name] else float("nan")
        bar = "<= 3" if name.startswith("UI") else "<= 30" if name.startswith("automation") else ""
        print(f"{name:22}{sample[name]:>22.2f}{universe[name]:>22.2f}{ratio:>8.1f}x   {bar}")
    print(f"seconds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
