"""Writes Dagster materializations into the warehouse's ``meta.lineage`` table."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from datetime import date

import dagster as dg
import pandas as pd

from stocker_core.market.builds import MonthBuild
from stocker_core.market.calendar import month_end
from stocker_core.market.sources import slice_dates
from stocker_core.market.validation import partition_key
from stocker_core.warehouse import Warehouse
from stocker_core.warehouse.db import frame_version


def record_build(
    context: dg.AssetExecutionContext,
    warehouse: Warehouse,
    build: MonthBuild,
    upstream: dict[str, dict[str, str]] | None = None,
) -> None:
    """One lineage row per written partition.

    ``upstream`` maps a partition key to {``asset@partition``: data version}.
    """
    asset = context.asset_key.to_user_string()
    code_version = context.assets_def.code_versions_by_key.get(context.asset_key) or ""
    warehouse.record_lineage(
        [
            {
                "asset": asset,
                "partition": key,
                "run_id": context.run.run_id,
                "code_version": code_version,
                "data_version": build.data_versions[key],
                "upstream": (upstream or {}).get(key, {}),
                "row_count": rows,
            }
            for key, rows in build.rows.items()
        ]
    )


def combined_version(build: MonthBuild) -> dg.DataVersion | None:
    """One data version for a run covering several partitions."""
    if not build.data_versions:
        return None
    joined = "|".join(f"{k}={v}" for k, v in sorted(build.data_versions.items()))
    return dg.DataVersion(hashlib.sha256(joined.encode()).hexdigest()[:16])


def recorded_versions(
    warehouse: Warehouse, assets: Sequence[str], keys: Sequence[str]
) -> dict[str, dict[str, str]]:
    """{key: {``asset@key``: latest data version}} for each of ``assets`` that has a
    lineage row for that partition key (unrecorded ones are left out)."""
    found: dict[str, dict[str, str]] = {key: {} for key in keys}
    for asset in assets:
        for key, version in warehouse.latest_data_versions(asset, list(keys)).items():
            if version:
                found[key][f"{asset}@{key}"] = version
    return found


def bar_versions(
    warehouse: Warehouse,
    ticker: str,
    months: Sequence[date],
    bars: pd.DataFrame,
    origin: str,
    recorded: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, str]:
    """Versions of the price bars a build read for ``months``: the ``prices`` partitions'
    recorded data versions when the bars came from the warehouse, otherwise (or where no
    lineage exists) a content hash of each month's bars under ``<origin>@<partition>``.
    ``recorded``: ``recorded_versions(warehouse, ["prices"], …)`` already read for these keys
    (a caller building many partitions reads them once, not once a partition)."""
    keys = [partition_key(ticker, month) for month in months]
    if recorded is None:
        recorded = recorded_versions(warehouse, ["prices"], keys) if origin == "warehouse" else {}
    elif origin != "warehouse":
        recorded = {}
    versions: dict[str, str] = {}
    for month, key in zip(months, keys, strict=True):
        if recorded.get(key):
            versions.update(recorded[key])
            continue
        part = slice_dates(bars, month, month_end(month))
        if len(part):
            versions[f"{origin}@{key}"] = frame_version(part.reset_index(drop=True))
    return versions


def attach_partition_metadata(
    context: dg.AssetExecutionContext,
    build: MonthBuild,
    own: Mapping[str, Mapping[str, object]] | None = None,
    reasons: Mapping[str, str] | None = None,
) -> None:
    """Give every partition of the run its own metadata on its own materialization event.

    Each partition gets ``rows_written``, ``status`` (``written``, ``no data``, or the reason
    in ``reasons``, e.g. quarantined or skipped) and its ``data_version``, plus ``own[key]``
    (its preview, plot, totals …). These override same-named run-wide values, so in a run
    over many partitions no partition shows another one's figures.
    """
    by_key: dict[str, dict[str, object]] = {}
    for key in context.partition_keys:
        if key in build.rows:
            status = "written"
        elif reasons and key in reasons:
            status = reasons[key]
        else:
            status = "no data: the source has no bars for this month"
        metadata: dict[str, object] = {"rows_written": build.rows.get(key, 0), "status": status}
        if key in build.data_versions:
            metadata["data_version"] = build.data_versions[key]
        for name, value in (own or {}).get(key, {}).items():
            is_numpy_scalar = hasattr(value, "item") and hasattr(value, "dtype")
            metadata[name] = value.item() if is_numpy_scalar else value
        by_key[key] = metadata
    add_partitions_metadata(context, by_key)


def add_partitions_metadata(
    context: dg.AssetExecutionContext, by_key: Mapping[str, Mapping[str, object]]
) -> None:
    """``context.add_asset_metadata(metadata, partition_key=key)`` for every key of ``by_key``
    at once, with the same result.

    Dagster's call works out the run's whole partition range and copies every partition's
    metadata gathered so far, each time: over a run of n partitions that is n² work (a
    2,500-partition run spent minutes there). Here the range is read once and the step's
    metadata is extended in one copy. It writes Dagster's own accumulator (Dagster is pinned
    exactly; ``tests/assets/test_partition_metadata.py`` holds it equal to the public call).
    """
    from dagster._core.execution.context.metadata_logging import (
        AssetMetadataHandle,
        OutputMetadataAccumulator,
    )

    targeted = set(context.partition_keys)
    outside = sorted(set(by_key) - targeted)
    if outside:
        raise dg.DagsterInvariantViolationError(
            f"Attempted to add metadata for partition key '{outside[0]}' that is not being targeted."
        )
    step = context.op_execution_context._step_execution_context
    accumulated = dict(step._metadata_accumulator.per_output_metadata)
    for key, metadata in by_key.items():
        handle = AssetMetadataHandle(asset_key=context.asset_key, partition_key=key)
        accumulated[handle] = {**accumulated.get(handle, {}), **metadata}
    step._metadata_accumulator = OutputMetadataAccumulator(per_output_metadata=accumulated)


def png_markdown(png: bytes, alt: str) -> dg.MetadataValue:
    """A PNG shown inline in the UI's metadata panel."""
    return dg.MetadataValue.md(f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})")
