"""The event log storage under its name before the split into ``definitions`` and ``engine``.

A Dagster home created before then has a ``dagster.yaml`` naming
``module: stocker_assets.event_storage``; this keeps it loading. New homes name
``stocker_assets.engine.event_storage`` (``stocker_assets/dagster.yaml``).
"""

from stocker_assets.engine.event_storage import PooledSqliteEventLogStorage

__all__ = ["PooledSqliteEventLogStorage"]
