"""DuckDB warehouse: connection, schemas, partition writes, point-in-time reads, lineage.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "Warehouse": "db",
    "frame_version": "db",
    "point_in_time": "point_in_time",
    "decision_cutoff": "point_in_time",
    "date_only_published_at": "point_in_time",
    "published_before": "point_in_time",
    "visible_events": "point_in_time",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
