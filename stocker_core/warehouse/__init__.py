"""DuckDB warehouse: connection, schemas, partition writes, point-in-time reads, lineage."""

from stocker_core.warehouse.db import Warehouse

__all__ = ["Warehouse"]
