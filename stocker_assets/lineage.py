"""Writes Dagster materializations into the warehouse's ``meta.lineage`` table."""

from __future__ import annotations

import hashlib

import dagster as dg

from stocker_core.market.pipeline import MonthBuild
from stocker_core.warehouse import Warehouse


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
