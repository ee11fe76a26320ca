"""The Dagster layer of Stocker: thin assets over stocker_core (``definitions``), the engine that
runs them for the ``stocker`` command (``engine``) and the command's pipeline areas."""
