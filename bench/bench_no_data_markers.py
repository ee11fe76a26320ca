""" "No data" markers: 5,000 runless materializations stored in one batch per asset
(``stocker_assets.engine.event_batch``) against the old way, one ``report_runless_asset_event`` per
partition, measured in the same run on fresh SQLite instances (the CLI's default instance).

The old way costs ~70-110 ms per partition on this disk, so by default it is timed on a
sample of ``--old-sample`` partitions and its time for all of them is projected from that
rate (shown as such); ``--old-sample 5000`` times it in full.

    python bench/bench_no_data_markers.py [--partitions 5000] [--old-sample 100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import dagster as dg

from stocker_assets.engine.event_batch import report_materializations
from stocker_assets.engine.runner import NO_DATA_TAG

ASSETS = ["prices", "indicators", "charts", "episodes", "ideal_trajectories", "specialist_votes"]


def markers(n: int) -> list[dg.AssetMaterialization]:
    """``n`` markers spread over the partitioned assets, ticker × month keys as in the pipeline."""
    out = []
    for i in range(n):
        asset = ASSETS[i % len(ASSETS)]
        slot = i // len(ASSETS)
        ticker, month = f"T{slot // 240:03d}", f"{1990 + (slot % 240) // 12}-{slot % 12 + 1:02d}-01"
        out.append(
            dg.AssetMaterialization(
                asset_key=dg.AssetKey(asset),
                partition=f"{ticker}|{month}",
                metadata={"status": "no data: benchmark", "rows_written": 0},
                tags={NO_DATA_TAG: "true"},
            )
        )
    return out


def timed(store, instance_dir: Path) -> float:
    instance_dir.mkdir()
    with dg.DagsterInstance.local_temp(str(instance_dir)) as instance:
        started = time.perf_counter()
        store(instance)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=5000)
    parser.add_argument("--old-sample", type=int, default=100)
    args = parser.parse_args()
    batch = markers(args.partitions)
    sample = batch[: min(args.old_sample, len(batch))]
    with tempfile.TemporaryDirectory() as tmp:
        new_s = timed(lambda inst: report_materializations(inst, batch), Path(tmp) / "batched")

        def one_by_one(instance: dg.DagsterInstance) -> None:
            for marker in sample:
                instance.report_runless_asset_event(marker)

        old_sample_s = timed(one_by_one, Path(tmp) / "one_by_one")
    old_rate = old_sample_s / len(sample)
    old_s = old_rate * len(batch)
    projected = "" if len(sample) == len(batch) else f" (projected from {len(sample)} timed)"
    print(f"partitions: {len(batch)} over {len(ASSETS)} assets")
    print(f"batched:      {new_s:8.2f} s   {1000 * new_s / len(batch):7.2f} ms/partition")
    print(f"one by one:   {old_s:8.2f} s   {1000 * old_rate:7.2f} ms/partition{projected}")
    print(f"speed-up:     {old_s / new_s:8.1f}x")


if __name__ == "__main__":
    main()
