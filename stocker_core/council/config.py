"""The council's settings live in ``stocker_core.config.Settings`` (one home for defaults).

``CouncilSettings`` is kept as the council's name for that same class.
"""

from stocker_core.config import BackendName, ModeratorName, Settings

CouncilSettings = Settings

__all__ = ["BackendName", "CouncilSettings", "ModeratorName"]
