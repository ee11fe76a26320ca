"""The decorators the warehouse's assets and checks share, written once.

Every asset that reads or writes the DuckDB warehouse takes the ``duckdb`` pool (one writer at
a time) and the code version of the module that defines it (``code_versions``); a partitioned
one is ticker × month and backfills in a single run. A partitioned check runs once per run
over that run's partitions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import dagster as dg

from stocker_assets.definitions.code_versions import module_code_version
from stocker_assets.definitions.partitions import ticker_month_partitions

DUCKDB_POOL = "duckdb"
"""The concurrency pool of everything that touches the warehouse (dagster.yaml limits it to one)."""


def warehouse_asset(
    group: str,
    description: str,
    *,
    kinds: set[str],
    deps: Sequence[object] | None = None,
    automation_condition: dg.AutomationCondition | None = None,
    op_tags: Mapping[str, str] | None = None,
    name: str | None = None,
    partitioned: bool = False,
) -> Callable[[Callable[..., object]], dg.AssetsDefinition]:
    """``@dg.asset`` of ``group`` in the ``duckdb`` pool, versioned by the code of the module that
    defines the function; ``partitioned``: ticker × month, one run per backfill."""

    def decorate(fn: Callable[..., object]) -> dg.AssetsDefinition:
        partitioning = (
            {"partitions_def": ticker_month_partitions, "backfill_policy": dg.BackfillPolicy.single_run()}
            if partitioned
            else {}
        )
        return dg.asset(
            name=name,
            group_name=group,
            code_version=module_code_version(fn.__module__),
            op_tags=op_tags,
            pool=DUCKDB_POOL,
            deps=deps,
            automation_condition=automation_condition,
            kinds=kinds,
            description=description,
            **partitioning,
        )(fn)

    return decorate


def partitioned_asset(
    group: str, description: str, **options: object
) -> Callable[[Callable[..., object]], dg.AssetsDefinition]:
    """:func:`warehouse_asset` over ticker × month partitions (``options``: its keywords)."""
    return warehouse_asset(group, description, partitioned=True, **options)  # type: ignore[arg-type]


def partitioned_check(
    asset: dg.AssetsDefinition, description: str, *, blocking: bool = False
) -> Callable[[Callable[..., dg.AssetCheckResult]], dg.AssetChecksDefinition]:
    """``@dg.asset_check`` on ``asset`` per ticker × month partition of the run, in the ``duckdb``
    pool (``blocking``: an ERROR result keeps the run's downstream assets from running)."""
    return dg.asset_check(
        asset=asset,
        partitions_def=ticker_month_partitions,
        pool=DUCKDB_POOL,
        blocking=blocking,
        description=description,
    )


def problem_lines(problems: Mapping[str, Sequence[str]]) -> str:
    """Markdown bullets ``key: problem; problem`` (the first 100 keys, sorted), or ``none``."""
    lines = [f"- **{key}**: {'; '.join(found)}" for key, found in sorted(problems.items())]
    return "\n".join(lines[:100]) or "none"
