"""Jobs over asset selections."""

import dagster as dg

from stocker_assets.partitions import ticker_month_partitions

market_job = dg.define_asset_job(
    "market_job",
    selection=dg.AssetSelection.groups("market"),
    partitions_def=ticker_month_partitions,
    description="prices + indicators (and charts) for ticker × month partitions.",
)
