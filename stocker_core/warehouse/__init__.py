"""DuckDB warehouse: connection, schemas, partition writes, lineage (the point-in-time cut
lives in ``stocker_core.context``).

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "Warehouse": "db",
    "frame_version": "db",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
