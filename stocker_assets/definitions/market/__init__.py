"""The market domain: daily bars, indicators and charts per ticker × month (``assets``), their
quality checks (``checks``), the market job, the corpus refresh schedule and the universe
sensor (``refresh``)."""

import dagster as dg

from stocker_assets.definitions.market import assets, checks, refresh


def definitions() -> dg.Definitions:
    """What the market domain adds to the code location (assets in Dagster's load order)."""
    return dg.Definitions(
        assets=[assets.charts, assets.indicators, assets.prices],
        asset_checks=[
            checks.prices_are_valid,
            checks.prices_are_fresh,
            checks.indicators_are_sane,
            checks.charts_are_complete,
        ],
        jobs=[refresh.market_job],
        schedules=[refresh.corpus_refresh],
        sensors=[refresh.universe_sync],
    )
