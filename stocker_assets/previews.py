"""Dagster's beta and preview notices, silenced wherever this package uses Dagster.

We rely on single-run backfills, multi-partition mappings and partitioned checks on purpose;
their notices are not news to users. The definitions and the engine call :func:`quiet` when
imported (``dagster_shared`` carries the warning classes that ``dagster`` re-exports), so a
command that runs no Dagster loads none of it.
"""

import warnings


def quiet() -> None:
    """Ignore Dagster's BetaWarning and PreviewWarning in this process."""
    from dagster_shared.utils.warnings import BetaWarning, PreviewWarning

    warnings.filterwarnings("ignore", category=BetaWarning)
    warnings.filterwarnings("ignore", category=PreviewWarning)
