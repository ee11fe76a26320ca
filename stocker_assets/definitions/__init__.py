"""What Dagster loads, grouped by domain; importing this package or any module of it builds
nothing and registers nothing (it only silences Dagster's preview notices, ``previews``).

- one module or package per domain, each holding its assets, checks, job, schedules and
  sensors, and a ``definitions()`` listing them: ``market/`` (bars, indicators, charts, their
  checks, the corpus refresh and the universe sensor), ``env``, ``text``, ``council``,
  ``evaluation/`` (with the deep-RL baselines), ``training/`` (moderator, agent, model checks),
  ``ledger``;
- what the domains share: ``partitions``, ``resources`` (``StockerResource``), ``factories``
  (the asset and check decorators), ``automation``, ``jobs`` (which job runs which groups),
  ``lineage``, ``code_versions``, ``progress``, ``queues``;
- ``build.build_definitions()`` assembles the one ``Definitions`` (every domain, the
  automation sensor, the resources) for whoever needs it; ``location`` is the code location
  that builds it on import (workspace.yaml, ``dg``, ``dagster dev``), and
  ``celery_definitions`` the same with the Celery executor.

How the ``stocker`` CLI executes them is ``stocker_assets.engine``, which imports this package,
never the reverse.
"""

from stocker_assets.previews import quiet

quiet()
