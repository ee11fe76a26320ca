"""The public names of ``stocker_core.warehouse``, imported on first use (``__init__.py``)."""

from .db import Warehouse as Warehouse, frame_version as frame_version
