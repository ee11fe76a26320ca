"""The run engine: how the ``stocker`` CLI executes the definitions (``stocker_assets.definitions``).

Its Dagster instance (``instance``), runs per ticker (``runner``), the main job's stages and
lanes (``stages``, ``lanes``, ``lane_lifetime``), the event log's speed-ups (``event_storage``,
``event_batch``), the progress display (``materialize_progress``), ``stocker ui``'s process
(``ui_process``), the scale-out files (``deploy``) and throw-away servers (``local_services``).
The engine imports the definitions; the definitions never import the engine.
"""

from stocker_assets.previews import quiet

quiet()
