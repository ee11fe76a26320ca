"""The one Definitions object (workspace.yaml points here)."""

import dagster as dg

from stocker_assets.assets import agent, council, drl, env, evaluation, market, training
from stocker_assets.checks import charts_are_complete, indicators_are_sane, prices_are_valid
from stocker_assets.jobs import market_job
from stocker_assets.resources import default_resources
from stocker_assets.schedules import corpus_refresh
from stocker_assets.sensors import universe_sync

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([market, env, council, evaluation, drl, training, agent]),
    asset_checks=[prices_are_valid, indicators_are_sane, charts_are_complete],
    jobs=[market_job],
    schedules=[corpus_refresh],
    sensors=[universe_sync],
    resources=default_resources(),
)
