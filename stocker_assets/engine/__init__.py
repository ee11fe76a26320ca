"""The run engine: how the ``stocker`` CLI executes the definitions (``stocker_assets.definitions``).

Its Dagster instance (``instance``), runs per ticker (``runner``), the main job's stages and
lanes (``stages``, ``lanes``, ``lane_lifetime``), the event log's speed-ups (``event_storage``,
``event_batch``), the progress display (``materialize_progress``), ``stocker ui``'s process
(``ui_process``) and the scale-out files (``deploy``). (The throw-away Postgres and Redis of the
scale-out tests and benchmark live with the tests: ``tests/scale/local_services.py``.)
The engine imports the definitions; the definitions never import the engine.
"""

from stocker_assets.previews import quiet

quiet()
