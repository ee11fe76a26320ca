"""DuckDB warehouse: connection, schemas, partition writes, lineage (the point-in-time cut
lives in ``stocker_core.decision_context``).

The public names are declared in ``__init__.pyi`` and imported on first use
(``lazy_loader``, SPEC 1): importing the package imports nothing heavy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
